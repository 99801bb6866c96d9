// Corpus BLEU, following sacreBLEU 2.6.0 (metrics/bleu.py, tokenizers/tokenizer_13a.py and
// tokenizer_re.py) step by step; see data/bleu.h. Strings are scanned as UTF-8 bytes: every
// character the rules name is ASCII, and Python's whitespace (str.split, str.rstrip) is matched
// as its UTF-8 byte sequences.
#include "data/bleu.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.h"

namespace normlab {

namespace {

constexpr int kMaxOrder = 4;

// Length in bytes of the Python whitespace character starting at s[i], or 0.
size_t whitespace_at(const std::string& s, size_t i) {
  const auto byte = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0; };
  const unsigned char c = byte(0);
  if ((c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20)) return 1;
  if (c == 0xC2 && (byte(1) == 0x85 || byte(1) == 0xA0)) return 2;                      // U+0085, U+00A0
  if (c == 0xE1 && byte(1) == 0x9A && byte(2) == 0x80) return 3;                        // U+1680
  if (c == 0xE3 && byte(1) == 0x80 && byte(2) == 0x80) return 3;                        // U+3000
  if (c != 0xE2) return 0;
  const unsigned char c1 = byte(1), c2 = byte(2);
  // U+2000-200A, U+2028, U+2029, U+202F
  if (c1 == 0x80 && ((c2 >= 0x80 && c2 <= 0x8A) || c2 == 0xA8 || c2 == 0xA9 || c2 == 0xAF)) return 3;
  if (c1 == 0x81 && c2 == 0x9F) return 3;                                                // U+205F
  return 0;
}

// Python's str.split(): the maximal runs of non-whitespace.
std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> words;
  std::string word;
  for (size_t i = 0; i < s.size();) {
    if (const size_t w = whitespace_at(s, i)) {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
      i += w;
    } else {
      word += s[i++];
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

// Python's str.rstrip().
std::string rstrip(const std::string& s) {
  size_t end = 0;
  for (size_t i = 0; i < s.size();) {
    if (const size_t w = whitespace_at(s, i)) {
      i += w;
    } else {
      end = ++i;
    }
  }
  return s.substr(0, end);
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  std::string out;
  size_t start = 0;
  for (size_t hit; (hit = s.find(from, start)) != std::string::npos; start = hit + from.size()) {
    out.append(s, start, hit - start);
    out += to;
  }
  out.append(s, start, std::string::npos);
  s = std::move(out);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_period_or_comma(char c) { return c == '.' || c == ','; }

// The first rule's class [\{-\~\[-\` -\&\(-\+\:-\@\/]: ASCII symbols and punctuation except the
// apostrophe, comma, dash and period (and the space itself, which splitting removes anyway).
bool is_split_symbol(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') || (c >= '(' && c <= '+') ||
         (c >= ':' && c <= '@') || c == '/';
}

// re.sub of a two-character pattern first(a) second(b) -> replace(a, b), scanning left to right
// without overlaps, as Python does.
template <typename First, typename Second, typename Replace>
std::string substitute_pairs(const std::string& s, First first, Second second, Replace replace) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && first(s[i]) && second(s[i + 1])) {
      out += replace(s[i], s[i + 1]);
      i += 2;
    } else {
      out += s[i++];
    }
  }
  return out;
}

using NgramCounts = std::unordered_map<std::string, int64_t>;

// The n-grams of orders 1..4 (tokens joined by spaces; a token has none) and their counts.
NgramCounts count_ngrams(const std::vector<std::string>& tokens) {
  NgramCounts counts;
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string gram;
    for (size_t n = 0; n < kMaxOrder && i + n < tokens.size(); ++n) {
      if (n) gram += ' ';
      gram += tokens[i + n];
      ++counts[gram];
    }
  }
  return counts;
}

// sacreBLEU's BLEU._get_closest_ref_len: the reference length nearest to hyp_len, a tie going to
// the shorter.
int64_t closest_ref_len(int64_t hyp_len, const std::vector<int64_t>& ref_lens) {
  int64_t closest_diff = -1, closest_len = -1;
  for (const int64_t ref_len : ref_lens) {
    const int64_t diff = std::abs(hyp_len - ref_len);
    if (closest_diff == -1 || diff < closest_diff) {
      closest_diff = diff;
      closest_len = ref_len;
    } else if (diff == closest_diff && ref_len < closest_len) {
      closest_len = ref_len;
    }
  }
  return closest_len;
}

std::vector<std::string> preprocess(const std::string& segment) { return split_words(tokenize_13a(rstrip(segment))); }

// One segment against its references (one per stream): each reference n-gram's count is the
// maximum over the references, and a hypothesis n-gram's matches are clipped by it.
void add_segment(const std::string& hypothesis, const std::vector<const std::string*>& references, BleuStats& stats) {
  NgramCounts ref_counts;
  std::vector<int64_t> ref_lens;
  for (const std::string* reference : references) {
    const std::vector<std::string> ref = preprocess(*reference);
    ref_lens.push_back(static_cast<int64_t>(ref.size()));
    for (const auto& [gram, count] : count_ngrams(ref)) {
      int64_t& max_count = ref_counts[gram];
      max_count = std::max(max_count, count);
    }
  }
  const std::vector<std::string> hyp = preprocess(hypothesis);
  stats.hyp_len += static_cast<int64_t>(hyp.size());
  stats.ref_len += closest_ref_len(static_cast<int64_t>(hyp.size()), ref_lens);
  for (const auto& [gram, count] : count_ngrams(hyp)) {
    const auto order = static_cast<size_t>(std::count(gram.begin(), gram.end(), ' '));
    stats.total[order] += count;
    const auto it = ref_counts.find(gram);
    if (it != ref_counts.end()) stats.correct[order] += std::min(count, it->second);
  }
}

}  // namespace

BleuStats& BleuStats::operator+=(const BleuStats& other) {
  hyp_len += other.hyp_len;
  ref_len += other.ref_len;
  for (size_t n = 0; n < correct.size(); ++n) {
    correct[n] += other.correct[n];
    total[n] += other.total[n];
  }
  return *this;
}

// sacreBLEU's BLEU.compute_bleu with smooth_method "exp" and effective_order False.
BleuScore bleu_of_stats(const BleuStats& s, int64_t n_refs) {
  BleuScore out;
  out.signature = bleu_signature(n_refs);
  out.correct = s.correct;
  out.total = s.total;
  out.hyp_len = s.hyp_len;
  out.ref_len = s.ref_len;
  const auto hyp_len = static_cast<double>(s.hyp_len), ref_len = static_cast<double>(s.ref_len);
  out.brevity_penalty = hyp_len >= ref_len ? 1.0 : hyp_len > 0 ? std::exp(1.0 - ref_len / hyp_len) : 0.0;
  bool any_correct = false;
  for (const int64_t c : s.correct) any_correct = any_correct || c != 0;
  if (!any_correct) return out;
  double log_sum = 0.0, smooth = 1.0;
  for (int n = 0; n < kMaxOrder; ++n) {
    if (s.total[n] == 0) return out;  // sacreBLEU stops: the orders left have precision 0, the score is 0
    if (s.correct[n] == 0) {
      smooth *= 2.0;
      out.precisions[n] = 100.0 / (smooth * static_cast<double>(s.total[n]));
    } else {
      out.precisions[n] = 100.0 * static_cast<double>(s.correct[n]) / static_cast<double>(s.total[n]);
    }
    log_sum += std::log(out.precisions[n]);
  }
  out.score = out.brevity_penalty * std::exp(log_sum / kMaxOrder);
  return out;
}

namespace {

}  // namespace

std::string tokenize_13a(const std::string& line) {
  std::string s = line;
  replace_all(s, "<skipped>", "");
  replace_all(s, "-\n", "");
  replace_all(s, "\n", " ");
  if (s.find('&') != std::string::npos) {
    replace_all(s, "&quot;", "\"");
    replace_all(s, "&amp;", "&");
    replace_all(s, "&lt;", "<");
    replace_all(s, "&gt;", ">");
  }
  std::string spaced = " ";
  for (const char c : s) {
    if (is_split_symbol(c)) spaced += std::string{' ', c, ' '};
    else spaced += c;
  }
  spaced += ' ';
  const auto not_digit = [](char c) { return !is_digit(c); };
  // A period or comma not preceded by a digit, then one not followed by a digit, is split off.
  spaced = substitute_pairs(spaced, not_digit, is_period_or_comma,
                            [](char a, char b) { return std::string{a, ' ', b, ' '}; });
  spaced = substitute_pairs(spaced, is_period_or_comma, not_digit,
                            [](char a, char b) { return std::string{' ', a, ' ', b}; });
  // A dash after a digit.
  spaced = substitute_pairs(spaced, is_digit, [](char c) { return c == '-'; },
                            [](char a, char b) { return std::string{a, ' ', b, ' '}; });
  std::string out;
  for (const std::string& word : split_words(spaced)) {
    if (!out.empty()) out += ' ';
    out += word;
  }
  return out;
}

std::vector<BleuStats> segment_bleu_stats(const std::vector<std::string>& hypotheses,
                                          const std::vector<std::vector<std::string>>& references) {
  NL_CHECK(!references.empty(), "bleu", "no reference streams");
  NL_CHECK(!hypotheses.empty(), "bleu", "no hypotheses");
  for (size_t r = 0; r < references.size(); ++r)
    NL_CHECK(references[r].size() == hypotheses.size(), "bleu",
             "reference stream {} has {} segments but there are {} hypotheses (one each)", r + 1,
             references[r].size(), hypotheses.size());
  std::vector<BleuStats> stats(hypotheses.size());
  std::vector<const std::string*> segment_refs(references.size());
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    for (size_t r = 0; r < references.size(); ++r) segment_refs[r] = &references[r][i];
    add_segment(hypotheses[i], segment_refs, stats[i]);
  }
  return stats;
}

BleuScore corpus_bleu_score(const std::vector<std::string>& hypotheses,
                            const std::vector<std::vector<std::string>>& references) {
  BleuStats sum;
  for (const BleuStats& segment : segment_bleu_stats(hypotheses, references)) sum += segment;
  return bleu_of_stats(sum, static_cast<int64_t>(references.size()));
}

double corpus_bleu(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references) {
  return corpus_bleu_score(hypotheses, {references}).score;
}

// BLEUSignature.format(): the metric's fields after nrefs, the version last.
std::string bleu_signature(int64_t n_refs) {
  return fmt::format("nrefs:{}|case:mixed|eff:no|tok:13a|smooth:exp|version:{}", n_refs, kSignatureVersion);
}

std::string BleuScore::format() const { return fmt::format("BLEU {:.2f} ({})", score, signature); }

// BLEUScore's _verbose; ratio is 0 when ref_len is 0, as sacreBLEU.
std::string BleuScore::verbose() const {
  const double ratio = ref_len ? static_cast<double>(hyp_len) / static_cast<double>(ref_len) : 0.0;
  return fmt::format("{:.1f}/{:.1f}/{:.1f}/{:.1f} (BP = {:.3f} ratio = {:.3f} hyp_len = {} ref_len = {})",
                     precisions[0], precisions[1], precisions[2], precisions[3], brevity_penalty, ratio, hyp_len,
                     ref_len);
}

}  // namespace normlab
