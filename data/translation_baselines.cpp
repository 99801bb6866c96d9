#include "data/translation_baselines.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <unordered_map>

#include "core/error.h"
#include "data/bleu.h"

namespace normlab {

namespace {

std::vector<std::string> words_of(const std::string& text) {
  std::istringstream in(tokenize_13a(text));
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string lowercase(std::string word) {  // ASCII letters; accented letters stay as they are
  for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return word;
}

// Ids of strings, in the order first seen.
struct Vocabulary {
  std::unordered_map<std::string, int64_t> ids;
  std::vector<std::string> words;
  int64_t id(const std::string& w) {
    const auto [it, added] = ids.emplace(w, static_cast<int64_t>(words.size()));
    if (added) words.push_back(w);
    return it->second;
  }
};

}  // namespace

struct WordByWord::Table {
  std::unordered_map<std::string, std::string> best;  // lowercased source word -> target word
};

WordByWord::WordByWord(const std::vector<std::string>& sources, const std::vector<std::string>& targets,
                       WordChoice choice)
    : table_(std::make_unique<Table>()) {
  NL_CHECK(sources.size() == targets.size() && !sources.empty(), "baseline",
           "word by word needs as many sources as targets, at least one, got {} and {}", sources.size(),
           targets.size());
  Vocabulary source_words, target_words;
  std::vector<int64_t> source_count, target_count;
  std::unordered_map<int64_t, std::unordered_map<int64_t, int64_t>> both;  // s -> t -> c(s, t)
  for (size_t i = 0; i < sources.size(); ++i) {
    std::set<int64_t> s_ids, t_ids;
    for (const std::string& w : words_of(sources[i])) s_ids.insert(source_words.id(lowercase(w)));
    for (const std::string& w : words_of(targets[i])) t_ids.insert(target_words.id(w));
    source_count.resize(source_words.words.size());
    target_count.resize(target_words.words.size());
    for (const int64_t s : s_ids) ++source_count[s];
    for (const int64_t t : t_ids) ++target_count[t];
    for (const int64_t s : s_ids)
      for (const int64_t t : t_ids) ++both[s][t];
  }
  for (const auto& [s, counts] : both) {
    int64_t best = -1;
    double best_score = -1.0;
    int64_t best_count = 0;
    for (const auto& [t, c] : counts) {
      const double score = choice == WordChoice::Dice
                               ? 2.0 * static_cast<double>(c) / static_cast<double>(source_count[s] + target_count[t])
                               : static_cast<double>(c);
      const bool better = score > best_score || (score == best_score && (c > best_count || (c == best_count && t < best)));
      if (better) best = t, best_score = score, best_count = c;
    }
    table_->best[source_words.words[s]] = target_words.words[best];
  }
}

WordByWord::~WordByWord() = default;

std::string WordByWord::translate(const std::string& source) const {
  std::string out;
  for (const std::string& w : words_of(source)) {
    const auto it = table_->best.find(lowercase(w));
    if (!out.empty()) out += ' ';
    out += it == table_->best.end() ? w : it->second;
  }
  return out;
}

}  // namespace normlab
