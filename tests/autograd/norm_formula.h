// The normalizations written out from their textbook formulas in long double, on plain vectors,
// with no normlab code at all: the independent reference the fused kernels are tested against
// (tests/autograd/norm_formula_test.cpp) and the norms of the whole-model reference
// (tests/nn/reference_model.h). Gradients come from central finite differences of these formulas,
// so no backward derivation is shared with the code under test.
//
// x is (rows, C) row-major. Per normalized segment of n values:
//   layer / group:  mean = sum x / n,  var = sum (x - mean)^2 / n,  xhat = (x - mean) / sqrt(var + eps)
//   rms:            xhat = x / sqrt(sum x^2 / n + eps)
//   batch (train):  the same as layer, but the segment is one channel over all rows
//   batch (eval):   xhat = (x - running_mean) / sqrt(running_var + eps)
// then y = xhat * s + b per channel, s = gamma (rms_unit_offset: 1 + gamma; absent: 1), b = beta
// (absent: 0).
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

namespace normlab::norm_formula {

using LD = long double;
using Vec = std::vector<LD>;

enum class Kind { Layer, Group, Rms, RmsUnitOffset, BatchTrain, BatchEval };

struct Spec {
  Kind kind = Kind::Layer;
  int64_t groups = 1;  // Group only
  LD eps = 1e-5L;
  Vec running_mean, running_var;  // BatchEval only, (C,)
};

// The centered segment x[at + k * stride], k < n, standardized in place into xhat.
inline void standardize(const Vec& x, Vec& xhat, int64_t at, int64_t stride, int64_t n, LD eps,
                        bool center) {
  LD mean = 0, var = 0;
  if (center) {
    for (int64_t k = 0; k < n; ++k) mean += x[at + k * stride];
    mean /= static_cast<LD>(n);
  }
  for (int64_t k = 0; k < n; ++k) var += (x[at + k * stride] - mean) * (x[at + k * stride] - mean);
  const LD denom = std::sqrt(var / static_cast<LD>(n) + eps);
  for (int64_t k = 0; k < n; ++k) xhat[at + k * stride] = (x[at + k * stride] - mean) / denom;
}

// y = norm(x) for x (rows, C); gamma, beta (C,) or empty when absent.
inline Vec forward(const Spec& spec, const Vec& x, int64_t C, const Vec& gamma, const Vec& beta) {
  const int64_t rows = static_cast<int64_t>(x.size()) / C;
  Vec xhat(x.size());
  switch (spec.kind) {
    case Kind::Layer:
    case Kind::Rms:
    case Kind::RmsUnitOffset:
      for (int64_t r = 0; r < rows; ++r) standardize(x, xhat, r * C, 1, C, spec.eps, spec.kind == Kind::Layer);
      break;
    case Kind::Group: {
      const int64_t n = C / spec.groups;
      for (int64_t s = 0; s < rows * spec.groups; ++s) standardize(x, xhat, s * n, 1, n, spec.eps, true);
      break;
    }
    case Kind::BatchTrain:
      for (int64_t j = 0; j < C; ++j) standardize(x, xhat, j, C, rows, spec.eps, true);
      break;
    case Kind::BatchEval:
      for (size_t i = 0; i < x.size(); ++i)
        xhat[i] = (x[i] - spec.running_mean[i % C]) / std::sqrt(spec.running_var[i % C] + spec.eps);
      break;
  }
  const LD offset = spec.kind == Kind::RmsUnitOffset ? 1 : 0;
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t j = i % static_cast<size_t>(C);
    y[i] = xhat[i] * (gamma.empty() ? 1 : offset + gamma[j]) + (beta.empty() ? 0 : beta[j]);
  }
  return y;
}

// d loss / d inputs[i] for every element of every input, by central differences in long double
// (step h: truncation ~h^2 f''', rounding ~1e-19 |loss| / h; both ~1e-12 at h = 1e-6).
inline std::vector<Vec> finite_difference_gradients(const std::function<LD(const std::vector<Vec>&)>& loss,
                                                    std::vector<Vec> inputs, LD h = 1e-6L) {
  std::vector<Vec> grads;
  for (Vec& in : inputs) {
    Vec g(in.size());
    for (size_t k = 0; k < in.size(); ++k) {
      const LD saved = in[k];
      in[k] = saved + h;
      const LD up = loss(inputs);
      in[k] = saved - h;
      const LD down = loss(inputs);
      in[k] = saved;
      g[k] = (up - down) / (2 * h);
    }
    grads.push_back(std::move(g));
  }
  return grads;
}

}  // namespace normlab::norm_formula
