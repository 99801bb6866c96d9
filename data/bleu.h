// Corpus BLEU as sacreBLEU 2.x computes it with its defaults (BLEU(): 4-grams, uniform weights,
// brevity penalty, smooth_method = "exp", tokenize = "13a", lowercase = False), one reference
// per hypothesis, on detokenized text. tests/data/bleu_test.cpp holds sacreBLEU's own scores.
#pragma once
#include <string>
#include <vector>

namespace normlab {

// sacreBLEU's "13a" tokenizer (mteval-v13a.pl's): drops "<skipped>", joins "-\n", unescapes
// &quot; &amp; &lt; &gt;, splits off punctuation and symbols (a period or comma only when not
// between digits, a dash only after a digit), and joins the tokens with single spaces.
std::string tokenize_13a(const std::string& line);

// Corpus BLEU in 0 .. 100 of hypotheses[i] against references[i] (same count, >= 1). Each segment
// is right-stripped of whitespace, then tokenized by tokenize_13a; n-gram matches (clipped by the
// reference counts), totals and lengths are summed over the corpus;
//   BLEU = BP * exp(mean_{n=1..4} log p_n),  p_n = 100 * matches_n / total_n,
//   BP = 1 if hyp_len >= ref_len, else exp(1 - ref_len / hyp_len) (0 for an empty corpus),
// with sacreBLEU's "exp" smoothing: the k-th order with zero matches gets p_n = 100 / (2^k total_n).
// 0 when nothing matches or some order has no n-grams at all (as sacreBLEU).
double corpus_bleu(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references);

}  // namespace normlab
