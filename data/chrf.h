// Corpus chrF (Popović 2015) and chrF++ (Popović 2017) as sacreBLEU 2.6.0 computes them with its
// defaults (CHRF(): char_order 6, word_order 0, beta 2, lowercase False, whitespace False,
// eps_smoothing False; chrF++ is word_order 2), with one or several references per hypothesis.
// tests/data/bleu_test.cpp holds sacreBLEU's own scores; the signature's version is
// kSignatureVersion (data/bleu.h).
//
// Statistics, per segment s and order k (k = 1..6 character n-grams, then k = 1..word_order word
// n-grams), against one reference ref:
//   hyp_k   = #n-grams of hyp_s (0 when ref has no n-gram of that order),  ref_k = #n-grams of ref,
//   match_k = sum_g min(count_hyp(g), count_ref(g)).
// Characters are Unicode code points of the segment with every (Python str.isspace) whitespace
// removed; words are the whitespace-separated words of the segment, each with one leading or
// trailing ASCII punctuation character split off (sacreBLEU's _remove_punctuation: a trailing one
// first; a one-character word stays whole).
// The F-score of statistics (sacreBLEU's "effective order", not eps smoothing):
//   P_k = match_k / hyp_k,  R_k = match_k / ref_k,  over the E orders with hyp_k > 0 and ref_k > 0:
//   P = mean P_k,  R = mean R_k,  chrF = 100 (1 + beta^2) P R / (beta^2 P + R)   (0 when P + R = 0).
// Several references: for each segment the reference whose statistics give the highest F-score
// (the first on a tie) is kept; the kept statistics are summed over the corpus and the corpus
// chrF is the F-score of the sums.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace normlab {

struct ChrfOptions {
  int char_order = 6;  // nc
  int word_order = 0;  // nw: 2 is chrF++
  int beta = 2;        // recall weighs beta times as much as precision
};

struct ChrfScore {
  double score = 0.0;  // 0 .. 100
  std::string name;    // sacreBLEU's: "chrF2", "chrF2++" ("chrF" beta, then word_order '+')
  // Corpus sums per order (characters 1..char_order, then words 1..word_order): {hyp, ref, match}.
  std::vector<std::array<int64_t, 3>> statistics;
  std::string signature;  // "nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:..."

  // "chrF2 54.32 (nrefs:2|...)".
  std::string format() const;
};

// Corpus chrF of hypotheses[i] against references[r][i] for every reference stream r (as
// sacrebleu.corpus_chrf(hyps, [refs1, refs2, ...]): at least one stream, each as long as the
// hypotheses, at least one hypothesis). Segments must be valid UTF-8 (an error names the segment).
ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references, const ChrfOptions& options = {});

// sacreBLEU's signature of CHRF(char_order, word_order) with `n_refs` references (beta is not in it).
std::string chrf_signature(int64_t n_refs, const ChrfOptions& options = {});

}  // namespace normlab
