// Corpus BLEU as sacreBLEU 2.x computes it with its defaults (BLEU(): 4-grams, uniform weights,
// brevity penalty, smooth_method = "exp", tokenize = "13a", lowercase = False, effective_order =
// False), with one or several references per hypothesis, on detokenized text; chrF is in
// data/chrf.h. tests/data/bleu_test.cpp holds sacreBLEU's own scores and signatures
// (tests/data/sacrebleu_reference.py prints them).
//
// Which sacreBLEU: the numbers and signature formats match sacreBLEU 2.6.0 (kSacreBleuVersion).
// A signature's `version` field says so without claiming to be sacreBLEU itself:
// "version:normlab-sacrebleu-2.6.0" (kSignatureVersion) where sacreBLEU prints "version:2.6.0";
// every other field is what sacreBLEU 2.6.0 prints for the same call.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace normlab {

inline constexpr const char* kSacreBleuVersion = "2.6.0";
inline constexpr const char* kSignatureVersion = "normlab-sacrebleu-2.6.0";

// sacreBLEU's "13a" tokenizer (mteval-v13a.pl's): drops "<skipped>", joins "-\n", unescapes
// &quot; &amp; &lt; &gt;, splits off punctuation and symbols (a period or comma only when not
// between digits, a dash only after a digit), and joins the tokens with single spaces.
std::string tokenize_13a(const std::string& line);

// A corpus BLEU and its sufficient statistics, as sacreBLEU's BLEUScore.
struct BleuScore {
  double score = 0.0;                          // 0 .. 100
  std::array<int64_t, 4> correct{}, total{};   // clipped matches and hypothesis n-grams, orders 1..4
  std::array<double, 4> precisions{};          // p_n in 0 .. 100 (smoothed; 0 after an order without n-grams)
  double brevity_penalty = 0.0;
  int64_t hyp_len = 0, ref_len = 0;            // tokens; ref_len sums each segment's closest reference
  std::string signature;                       // "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:..."

  // "BLEU 31.20 (nrefs:2|...)": the score to two decimals and the signature.
  std::string format() const;
  // sacreBLEU's verbose part, "55.0/36.1/25.0/17.6 (BP = 1.000 ratio = 1.012 hyp_len = 1234 ref_len = 1220)".
  std::string verbose() const;
};

// The sufficient statistics of a segment, or of a corpus (the sum of its segments'): clipped
// matches and hypothesis n-grams per order 1..4, the hypothesis length and the closest reference
// length (as below).
struct BleuStats {
  int64_t hyp_len = 0, ref_len = 0;
  std::array<int64_t, 4> correct{}, total{};
  BleuStats& operator+=(const BleuStats& other);
};

// Corpus BLEU of hypotheses[i] against references[r][i] for every reference stream r (as
// sacrebleu.corpus_bleu(hyps, [refs1, refs2, ...]): at least one stream, each as long as the
// hypotheses, at least one hypothesis). Each segment is right-stripped of whitespace and tokenized
// by tokenize_13a; then, per segment s and order n = 1..4,
//   total_n   += #n-grams of hyp_s
//   correct_n += sum_g min(count_{hyp_s}(g), max_r count_{ref_{r,s}}(g))   (clipping by the max)
//   hyp_len   += |hyp_s|,  ref_len += |ref_{r*,s}|, r* = argmin_r | |ref_{r,s}| - |hyp_s| |
//                (the closest reference length; a tie goes to the shorter),
// and over the corpus
//   BLEU = BP * exp(mean_{n=1..4} log p_n),  p_n = 100 * correct_n / total_n,
//   BP = 1 if hyp_len >= ref_len, else exp(1 - ref_len / hyp_len) (0 when hyp_len = 0),
// with sacreBLEU's "exp" smoothing: the k-th order with zero matches gets p_n = 100 / (2^k total_n).
// The score is 0 when nothing matches or some order has no n-grams at all (as sacreBLEU).
BleuScore corpus_bleu_score(const std::vector<std::string>& hypotheses,
                            const std::vector<std::vector<std::string>>& references);

// Each segment's statistics, with corpus_bleu_score's checks (corpus_bleu_score is
// bleu_of_stats of their sum): what a bootstrap over segments resamples (data/bleu_bootstrap.h).
std::vector<BleuStats> segment_bleu_stats(const std::vector<std::string>& hypotheses,
                                          const std::vector<std::vector<std::string>>& references);
// BLEU from summed statistics, with the signature for n_refs references.
BleuScore bleu_of_stats(const BleuStats& sum, int64_t n_refs);

// The one-reference case: corpus_bleu_score(hypotheses, {references}).score.
double corpus_bleu(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references);

// sacreBLEU's signature of BLEU() with `n_refs` references, version kSignatureVersion.
std::string bleu_signature(int64_t n_refs);

}  // namespace normlab
