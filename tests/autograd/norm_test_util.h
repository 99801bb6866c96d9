// Shared helpers of the normalization tests: seeded inputs and one forward + backward run.
#pragma once
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "autograd/ops.h"
#include "core/ops.h"
#include "core/random.h"

namespace normlab::norm_testing {

using Fn = std::function<Var(const std::vector<Var>&)>;

// x (x_shape) ~ N(0.3, 1.5^2), then `params` per-channel tensors (C,): gamma-like 1 + 0.1 N(0,1)
// for even positions, beta-like 0.5 N(0,1) for odd ones. Drawn in float64, then cast to dtype.
inline std::vector<Tensor> make_inputs(const Shape& x_shape, int params, DType dtype = DType::F64,
                                       uint64_t seed = 11) {
  Generator gen(seed);
  std::vector<Tensor> t{Tensor::randn(x_shape, gen, 0.3, 1.5, DType::F64)};
  for (int i = 0; i < params; ++i) {
    const Tensor n = Tensor::randn({x_shape.back()}, gen, 0.0, 1.0, DType::F64);
    t.push_back(i % 2 == 0 ? ops::unary(UnaryOp::AddScalar, ops::scale(n, 0.1), 1.0) : ops::scale(n, 0.5));
  }
  for (Tensor& x : t) x = x.to(dtype);
  return t;
}

struct Run {
  std::vector<double> y;
  std::vector<std::vector<double>> grads;  // dL/d(input i), empty when none arrived
};

// y = f(inputs) with every input a parameter; L = sum(y * w), w ~ N(0,1) fixed by `seed`.
inline Run forward_backward(const Fn& f, const std::vector<Tensor>& inputs, uint64_t seed = 7) {
  Tape::current().clear();
  std::vector<Var> vars;
  for (const Tensor& t : inputs) vars.push_back(parameter(t.clone()));
  Var y = f(vars);
  Generator gen(seed);
  const Tensor w = Tensor::randn(y.shape(), gen, 0.0, 1.0, DType::F64).to(y.dtype());
  backward(sum_all(mul(y, constant(w))));
  Run r{y.value().to_vector(), {}};
  for (const Var& v : vars) r.grads.push_back(v.grad().defined() ? v.grad().to_vector() : std::vector<double>{});
  return r;
}

inline double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0.0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

inline double max_abs(const std::vector<double>& a) {
  double m = 0.0;
  for (double v : a) m = std::max(m, std::abs(v));
  return m;
}

}  // namespace normlab::norm_testing
