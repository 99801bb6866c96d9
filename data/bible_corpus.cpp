#include "data/bible_corpus.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/digest.h"
#include "core/error.h"

namespace normlab {

namespace {

constexpr const char* kOp = "bible";
constexpr size_t kGram = 4;

std::map<std::string, const std::string*> by_reference(const std::vector<VerseText>& verses, const char* side) {
  std::map<std::string, const std::string*> index;
  for (const VerseText& verse : verses) {
    const bool inserted = index.emplace(verse.ref, &verse.text).second;
    NL_CHECK(inserted, kOp, "the {} text has verse {} twice", side, verse.ref);
  }
  return index;
}

// Lowercased words: runs of ASCII letters and digits and of bytes >= 0x80 (so "Jehová" is a word).
std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> words(1);
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    const bool word = u >= 0x80 || std::isalnum(u);
    if (word) words.back() += static_cast<char>(std::tolower(u));
    else if (!words.back().empty()) words.emplace_back();
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

std::vector<std::string> distinct_4grams(const std::string& text) {
  const std::vector<std::string> words = words_of(text);
  std::set<std::string> grams;
  for (size_t i = 0; i + kGram <= words.size(); ++i)
    grams.insert(words[i] + ' ' + words[i + 1] + ' ' + words[i + 2] + ' ' + words[i + 3]);
  return {grams.begin(), grams.end()};
}

enum class Split { Train, Valid, Test };

Split assign(const AlignedVerse& verse, const SplitRule& rule) {
  if (std::find(rule.test_books.begin(), rule.test_books.end(), verse.book) != rule.test_books.end())
    return Split::Test;
  return static_cast<int64_t>(fnv1a_64(verse.ref) % 10000) < rule.valid_per_10000 ? Split::Valid : Split::Train;
}

// For each held-out verse (valid or test) that nearly repeats a verse of another split: the
// index of the first such verse; -1 for the others.
std::vector<int64_t> near_duplicate_partners(const std::vector<AlignedVerse>& verses, const std::vector<Split>& split,
                                             double share) {
  std::vector<std::vector<std::string>> grams(verses.size());
  std::unordered_map<std::string, std::vector<int64_t>> verses_with;
  for (size_t i = 0; i < verses.size(); ++i) {
    grams[i] = distinct_4grams(verses[i].target);
    for (const std::string& gram : grams[i]) verses_with[gram].push_back(static_cast<int64_t>(i));
  }
  std::vector<int64_t> partner(verses.size(), -1);
  for (size_t i = 0; i < verses.size(); ++i) {
    if (split[i] == Split::Train || grams[i].empty()) continue;
    std::unordered_map<int64_t, int64_t> shared;  // other verse -> 4-grams in common
    for (const std::string& gram : grams[i])
      for (const int64_t other : verses_with[gram])
        if (split[other] != split[i]) ++shared[other];
    int64_t best = -1, best_count = 0;
    for (const auto& [other, count] : shared)
      if (count > best_count || (count == best_count && other < best)) best = other, best_count = count;
    if (best >= 0 && static_cast<double>(best_count) > share * static_cast<double>(grams[i].size())) partner[i] = best;
  }
  return partner;
}

}  // namespace

std::string book_of(const std::string& ref) { return ref.substr(0, ref.find('.')); }

namespace {

// "Num.13" and 1 of "Num.13.1".
std::pair<std::string, int64_t> chapter_and_verse(const std::string& ref) {
  const size_t dot = ref.rfind('.');
  return {ref.substr(0, dot), std::stoll(ref.substr(dot + 1))};
}

// Mean |ln(|source_v| / (ratio |target_{v+shift}|))| over the chapter's verses that have a v + shift.
double shift_cost(const std::map<int64_t, const AlignedVerse*>& chapter, int64_t shift, double ratio) {
  double total = 0.0;
  int64_t n = 0;
  for (const auto& [verse, aligned] : chapter) {
    const auto other = chapter.find(verse + shift);
    if (other == chapter.end()) continue;
    total += std::abs(std::log(static_cast<double>(aligned->source.size()) /
                               (ratio * static_cast<double>(other->second->target.size()))));
    ++n;
  }
  return n > 0 ? total / static_cast<double>(n) : INFINITY;
}

}  // namespace

std::vector<std::string> shifted_chapters(const std::vector<AlignedVerse>& verses, double shift_margin) {
  double source_chars = 0.0, target_chars = 0.0;
  std::map<std::string, std::map<int64_t, const AlignedVerse*>> chapters;
  for (const AlignedVerse& v : verses) {
    source_chars += static_cast<double>(v.source.size());
    target_chars += static_cast<double>(v.target.size());
    const auto [chapter, verse] = chapter_and_verse(v.ref);
    chapters[chapter][verse] = &v;
  }
  const double ratio = source_chars / std::max(target_chars, 1.0);
  std::vector<std::string> shifted;
  for (const auto& [name, chapter] : chapters) {
    const double aligned = shift_cost(chapter, 0, ratio);
    if (std::min(shift_cost(chapter, 1, ratio), shift_cost(chapter, -1, ratio)) < shift_margin * aligned)
      shifted.push_back(name);
  }
  return shifted;
}

std::vector<AlignedVerse> without_chapters(const std::vector<AlignedVerse>& verses,
                                           const std::vector<std::string>& chapters) {
  const std::set<std::string> dropped(chapters.begin(), chapters.end());
  std::vector<AlignedVerse> kept;
  for (const AlignedVerse& v : verses)
    if (!dropped.count(chapter_and_verse(v.ref).first)) kept.push_back(v);
  return kept;
}

std::vector<AlignedVerse> align_verses(const std::vector<VerseText>& source, const std::vector<VerseText>& target,
                                       const std::vector<VerseText>& second, AlignmentCounts& counts) {
  by_reference(source, "source");  // only checks that no reference repeats
  const auto targets = by_reference(target, "target");
  const auto seconds = by_reference(second, "second reference");
  std::vector<AlignedVerse> aligned;
  counts = {};
  counts.source_verses = static_cast<int64_t>(source.size());
  for (const VerseText& verse : source) {
    const auto t = targets.find(verse.ref);
    const auto s = seconds.find(verse.ref);
    if (t == targets.end()) ++counts.missing_target;
    if (s == seconds.end()) ++counts.missing_second;
    if (t == targets.end() || s == seconds.end()) continue;
    if (verse.text.empty() || t->second->empty() || s->second->empty()) {
      ++counts.empty;
      continue;
    }
    aligned.push_back({verse.ref, book_of(verse.ref), verse.text, *t->second, *s->second});
  }
  counts.aligned = static_cast<int64_t>(aligned.size());
  return aligned;
}

double shared_4gram_share(const std::string& text, const std::string& other) {
  const std::vector<std::string> grams = distinct_4grams(text);
  if (grams.empty()) return 0.0;
  const std::vector<std::string> other_grams = distinct_4grams(other);
  const std::unordered_set<std::string> others(other_grams.begin(), other_grams.end());
  const auto shared = std::count_if(grams.begin(), grams.end(), [&](const std::string& g) { return others.count(g); });
  return static_cast<double>(shared) / static_cast<double>(grams.size());
}

CorpusSplits split_corpus(const std::vector<AlignedVerse>& verses, const SplitRule& rule) {
  std::vector<Split> split(verses.size());
  for (size_t i = 0; i < verses.size(); ++i) split[i] = assign(verses[i], rule);
  const std::vector<int64_t> partner = near_duplicate_partners(verses, split, rule.near_duplicate_share);
  CorpusSplits out;
  for (size_t i = 0; i < verses.size(); ++i) {
    if (partner[i] >= 0) {
      out.near_duplicates.push_back(verses[i].ref + " ~ " + verses[partner[i]].ref);
      continue;
    }
    (split[i] == Split::Test ? out.test : split[i] == Split::Valid ? out.valid : out.train).push_back(verses[i]);
  }
  return out;
}

std::map<std::string, std::string> corpus_files(const CorpusSplits& splits) {
  std::map<std::string, std::string> files;
  const auto write = [&](const std::string& name, const std::vector<AlignedVerse>& verses, bool with_second) {
    std::string& tsv = files[name + ".tsv"];
    std::string& refs = files[name + ".refs"];
    for (const AlignedVerse& verse : verses) {
      tsv += verse.source + '\t' + verse.target;
      if (with_second) tsv += '\t' + verse.second;
      tsv += '\n';
      refs += verse.ref + '\n';
    }
  };
  write("train", splits.train, false);
  write("valid", splits.valid, true);
  write("test", splits.test, true);
  return files;
}

}  // namespace normlab
