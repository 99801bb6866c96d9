#include "data/bleu_bootstrap.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/random.h"

namespace normlab {

namespace {
double bleu_of_sum(const std::vector<BleuStats>& segments, int64_t n_refs) {
  BleuStats sum;
  for (const BleuStats& s : segments) sum += s;
  return bleu_of_stats(sum, n_refs).score;
}

// The k-th smallest (1-based) of sorted values, k = ceil(q R) clamped to [1, R].
double nearest_rank(const std::vector<double>& sorted, double q) {
  const auto r = static_cast<int64_t>(sorted.size());
  const int64_t k = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(q * static_cast<double>(r))), 1, r);
  return sorted[static_cast<size_t>(k - 1)];
}
}  // namespace

PairedBootstrap paired_bootstrap_bleu(const std::vector<BleuStats>& a, const std::vector<BleuStats>& b,
                                      int64_t n_refs, int64_t resamples, uint64_t seed) {
  NL_CHECK(!a.empty() && a.size() == b.size(), "bleu", "a paired bootstrap needs the same segments for both systems, "
           "got {} and {}", a.size(), b.size());
  NL_CHECK(resamples >= 1, "bleu", "a bootstrap needs at least 1 resample, got {}", resamples);
  PairedBootstrap out;
  out.bleu_a = bleu_of_sum(a, n_refs);
  out.bleu_b = bleu_of_sum(b, n_refs);
  out.difference = out.bleu_a - out.bleu_b;
  out.resamples = resamples;
  out.seed = seed;
  Generator gen(seed);
  std::vector<double> differences;
  int64_t not_better = 0;
  for (int64_t r = 0; r < resamples; ++r) {
    BleuStats sum_a, sum_b;
    for (size_t i = 0; i < a.size(); ++i) {
      const auto pick = static_cast<size_t>(gen.below(a.size()));
      sum_a += a[pick];
      sum_b += b[pick];
    }
    const double d = bleu_of_stats(sum_a, n_refs).score - bleu_of_stats(sum_b, n_refs).score;
    differences.push_back(d);
    not_better += d <= 0.0 ? 1 : 0;
  }
  std::sort(differences.begin(), differences.end());
  out.low = nearest_rank(differences, 0.025);
  out.high = nearest_rank(differences, 0.975);
  out.share_not_better = static_cast<double>(not_better) / static_cast<double>(resamples);
  return out;
}

}  // namespace normlab
