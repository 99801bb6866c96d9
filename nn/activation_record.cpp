#include "nn/activation_record.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/ops.h"

namespace normlab {

namespace {
thread_local ActivationRecorder* g_recorder = nullptr;
}  // namespace

ActivationRecorder::ActivationRecorder() : previous_(g_recorder) { g_recorder = this; }
ActivationRecorder::~ActivationRecorder() { g_recorder = previous_; }

ActivationRecorder* activation_recorder() { return g_recorder; }

double host_rms(const Tensor& x) {
  return std::sqrt(ops::sum_squares(x) / static_cast<double>(x.numel()));
}

void record_attention(ActivationRecorder& recorder, const std::string& scope, const Tensor& scores,
                      const Tensor& probs, double scale, bool causal, int64_t window, const Tensor& key_padding) {
  NL_CHECK(scores.dim() == 4 && probs.shape() == scores.shape(), "record_attention",
           "expected scores and probs (B,H,Tq,Tk) of one shape, got {} and {}", shape_str(scores.shape()),
           shape_str(probs.shape()));
  const int64_t tq = scores.size(2), tk = scores.size(3), rows = scores.numel() / tk;
  const std::vector<double> s = scores.to_vector(), p = probs.to_vector();
  const std::vector<int32_t> padded = key_padding.defined() ? key_padding.to_ints() : std::vector<int32_t>{};
  const int64_t rows_per_batch = scores.size(1) * tq;
  double logit_max = -std::numeric_limits<double>::infinity(), entropy = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = r % tq;
    const int64_t first = causal && window > 0 ? std::max<int64_t>(0, i - window) : 0;
    const int64_t last = causal ? std::min(i, tk - 1) : tk - 1;  // keys first..last are seen
    for (int64_t j = first; j <= last; ++j) {
      if (!padded.empty() && padded[static_cast<size_t>(r / rows_per_batch * tk + j)]) continue;
      const size_t at = static_cast<size_t>(r * tk + j);
      logit_max = std::max(logit_max, scale * s[at]);
      if (p[at] > 0.0) entropy -= p[at] * std::log(p[at]);
    }
  }
  recorder.add(scope + ".logit_max", logit_max);
  recorder.add(scope + ".entropy", entropy / static_cast<double>(rows));
}

}  // namespace normlab
