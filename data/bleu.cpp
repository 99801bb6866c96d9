// Corpus BLEU, following sacreBLEU 2.x (metrics/bleu.py, tokenizers/tokenizer_13a.py and
// tokenizer_re.py) step by step; see data/bleu.h. Strings are scanned as UTF-8 bytes: every
// character the rules name is ASCII, and Python's whitespace (str.split, str.rstrip) is matched
// as its UTF-8 byte sequences.
#include "data/bleu.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

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

struct BleuStats {
  int64_t hyp_len = 0, ref_len = 0;
  std::array<int64_t, kMaxOrder> correct{}, total{};
};

void add_segment(const std::string& hypothesis, const std::string& reference, BleuStats& stats) {
  const std::vector<std::string> hyp = split_words(tokenize_13a(rstrip(hypothesis)));
  const std::vector<std::string> ref = split_words(tokenize_13a(rstrip(reference)));
  stats.hyp_len += static_cast<int64_t>(hyp.size());
  stats.ref_len += static_cast<int64_t>(ref.size());
  const NgramCounts ref_counts = count_ngrams(ref);
  for (const auto& [gram, count] : count_ngrams(hyp)) {
    const auto order = static_cast<size_t>(std::count(gram.begin(), gram.end(), ' '));
    stats.total[order] += count;
    const auto it = ref_counts.find(gram);
    if (it != ref_counts.end()) stats.correct[order] += std::min(count, it->second);
  }
}

// sacreBLEU's BLEU.compute_bleu with smooth_method "exp" and effective_order False.
double score_of(const BleuStats& s) {
  const auto hyp_len = static_cast<double>(s.hyp_len), ref_len = static_cast<double>(s.ref_len);
  const double bp = hyp_len >= ref_len ? 1.0 : hyp_len > 0 ? std::exp(1.0 - ref_len / hyp_len) : 0.0;
  bool any_correct = false;
  for (const int64_t c : s.correct) any_correct = any_correct || c != 0;
  if (!any_correct) return 0.0;
  double log_sum = 0.0, smooth = 1.0;
  for (int n = 0; n < kMaxOrder; ++n) {
    if (s.total[n] == 0) return 0.0;  // sacreBLEU stops; the orders left have precision 0
    double precision;
    if (s.correct[n] == 0) {
      smooth *= 2.0;
      precision = 100.0 / (smooth * static_cast<double>(s.total[n]));
    } else {
      precision = 100.0 * static_cast<double>(s.correct[n]) / static_cast<double>(s.total[n]);
    }
    log_sum += std::log(precision);
  }
  return bp * std::exp(log_sum / kMaxOrder);
}

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

double corpus_bleu(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references) {
  NL_CHECK(hypotheses.size() == references.size(), "bleu", "{} hypotheses but {} references (one each)",
           hypotheses.size(), references.size());
  NL_CHECK(!hypotheses.empty(), "bleu", "no hypotheses");
  BleuStats stats;
  for (size_t i = 0; i < hypotheses.size(); ++i) add_segment(hypotheses[i], references[i], stats);
  return score_of(stats);
}

}  // namespace normlab
