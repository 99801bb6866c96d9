// Corpus chrF / chrF++, following sacreBLEU 2.6.0 (metrics/chrf.py and metrics/helpers.py) step
// by step; see data/chrf.h. Text is decoded to code points, as Python's str.
#include "data/chrf.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "core/error.h"
#include "data/bleu.h"
#include "data/utf8.h"

namespace normlab {

namespace {

using Counts = std::unordered_map<std::u32string, int64_t>;
using Statistics = std::vector<std::array<int64_t, 3>>;  // per order: {hyp, ref, match}

// Python's str.isspace() (the characters str.split() splits on; data/bleu.cpp matches the same set
// as UTF-8 bytes).
bool is_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// The code points of `text`; invalid UTF-8 is an error naming `where`.
std::u32string decode(const std::string& text, const std::string& where) {
  const std::vector<char32_t> code_points = utf8::decode(text, "chrf", where);
  return {code_points.begin(), code_points.end()};
}

// string.punctuation, the set chrF++ splits off words.
bool is_punctuation(char32_t c) {
  return c < 0x80 && std::u32string_view(U"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~").find(c) != std::u32string_view::npos;
}

std::vector<std::u32string> split_words(const std::u32string& text) {
  std::vector<std::u32string> words;
  std::u32string word;
  for (const char32_t c : text) {
    if (!is_space(c)) {
      word += c;
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

// sacreBLEU's CHRF._remove_punctuation: "word." -> "word" "."; else "(word" -> "(" "word".
std::vector<std::u32string> words_without_punctuation(const std::u32string& text) {
  std::vector<std::u32string> out;
  for (const std::u32string& w : split_words(text)) {
    if (w.size() > 1 && is_punctuation(w.back())) {
      out.push_back(w.substr(0, w.size() - 1));
      out.push_back(w.substr(w.size() - 1));
    } else if (w.size() > 1 && is_punctuation(w.front())) {
      out.push_back(w.substr(0, 1));
      out.push_back(w.substr(1));
    } else {
      out.push_back(w);
    }
  }
  return out;
}

// The n-gram counts of each order: characters 1..char_order (whitespace removed), then words
// 1..word_order (joined by spaces).
std::vector<Counts> ngram_counts(const std::u32string& text, const ChrfOptions& options) {
  std::vector<Counts> counts;
  std::u32string chars;
  for (const char32_t c : text)
    if (!is_space(c)) chars += c;
  for (size_t n = 1; n <= static_cast<size_t>(options.char_order); ++n) {
    Counts& order = counts.emplace_back();
    for (size_t i = 0; i + n <= chars.size(); ++i) ++order[chars.substr(i, n)];
  }
  if (options.word_order > 0) {
    const std::vector<std::u32string> words = words_without_punctuation(text);
    for (size_t n = 1; n <= static_cast<size_t>(options.word_order); ++n) {
      Counts& order = counts.emplace_back();
      for (size_t i = 0; i + n <= words.size(); ++i) {
        std::u32string gram = words[i];
        for (size_t k = 1; k < n; ++k) gram += U' ' + words[i + k];
        ++order[gram];
      }
    }
  }
  return counts;
}

// CHRF._get_match_statistics for every order.
Statistics match_statistics(const std::vector<Counts>& hyp, const std::vector<Counts>& ref) {
  Statistics stats(hyp.size());
  for (size_t k = 0; k < hyp.size(); ++k) {
    int64_t hyp_count = 0, ref_count = 0, match = 0;
    for (const auto& [gram, count] : hyp[k]) {
      hyp_count += count;
      const auto it = ref[k].find(gram);
      if (it != ref[k].end()) match += std::min(count, it->second);
    }
    for (const auto& entry : ref[k]) ref_count += entry.second;
    stats[k] = {ref[k].empty() ? 0 : hyp_count, ref_count, match};
  }
  return stats;
}

// CHRF._compute_f_score with eps_smoothing False, in sacreBLEU's order of operations.
double f_score(const Statistics& stats, int beta) {
  const int factor = beta * beta;
  double avg_prec = 0.0, avg_rec = 0.0;
  int effective_order = 0;
  for (const auto& [n_hyp, n_ref, n_match] : stats) {
    if (n_hyp > 0 && n_ref > 0) {
      avg_prec += static_cast<double>(n_match) / static_cast<double>(n_hyp);
      avg_rec += static_cast<double>(n_match) / static_cast<double>(n_ref);
      ++effective_order;
    }
  }
  if (effective_order == 0) return 0.0;
  avg_prec /= effective_order;
  avg_rec /= effective_order;
  if (avg_prec + avg_rec == 0.0) return 0.0;
  double score = (1 + factor) * avg_prec * avg_rec;
  score /= factor * avg_prec + avg_rec;
  return 100 * score;
}

}  // namespace

ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references, const ChrfOptions& options) {
  NL_CHECK(options.char_order >= 1 && options.word_order >= 0 && options.beta >= 1, "chrf",
           "needs char_order >= 1, word_order >= 0 and beta >= 1, got {}, {}, {}", options.char_order,
           options.word_order, options.beta);
  NL_CHECK(!references.empty(), "chrf", "no reference streams");
  NL_CHECK(!hypotheses.empty(), "chrf", "no hypotheses");
  for (size_t r = 0; r < references.size(); ++r)
    NL_CHECK(references[r].size() == hypotheses.size(), "chrf",
             "reference stream {} has {} segments but there are {} hypotheses (one each)", r + 1,
             references[r].size(), hypotheses.size());
  ChrfScore out;
  out.statistics.assign(static_cast<size_t>(options.char_order + options.word_order), {0, 0, 0});
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    const auto hyp = ngram_counts(decode(hypotheses[i], fmt::format("hypothesis {}", i + 1)), options);
    Statistics best;
    double best_f = -1.0;
    for (size_t r = 0; r < references.size(); ++r) {
      const std::u32string text = decode(references[r][i], fmt::format("reference {} of stream {}", i + 1, r + 1));
      Statistics stats = match_statistics(hyp, ngram_counts(text, options));
      const double f = f_score(stats, options.beta);
      if (f > best_f) {
        best_f = f;
        best = std::move(stats);
      }
    }
    for (size_t k = 0; k < best.size(); ++k)
      for (size_t j = 0; j < 3; ++j) out.statistics[k][j] += best[k][j];
  }
  out.score = f_score(out.statistics, options.beta);
  out.name = fmt::format("chrF{}{}", options.beta, std::string(static_cast<size_t>(options.word_order), '+'));
  out.signature = chrf_signature(static_cast<int64_t>(references.size()), options);
  return out;
}

// CHRFSignature.format(): the metric's fields after nrefs, the version last.
std::string chrf_signature(int64_t n_refs, const ChrfOptions& options) {
  return fmt::format("nrefs:{}|case:mixed|eff:yes|nc:{}|nw:{}|space:no|version:{}", n_refs, options.char_order,
                     options.word_order, kSignatureVersion);
}

std::string ChrfScore::format() const { return fmt::format("{} {:.2f} ({})", name, score, signature); }

}  // namespace normlab
