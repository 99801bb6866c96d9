#include "autograd/norm_reference.h"

namespace normlab::reference {

namespace {

// y = xhat * gamma + beta, each factor optional (broadcast over the leading axes).
Var affine(const Var& xhat, const Var& gamma, const Var& beta) {
  Var y = gamma.defined() ? mul(xhat, gamma) : xhat;
  return beta.defined() ? add(y, beta) : y;
}

// (x - mean) / sqrt(var + eps) with mean and biased var over the last axis, kept as size 1.
Var standardize_last(const Var& x, double eps) {
  Var mu = mean(x, -1, /*keepdim=*/true);
  Var centered = sub(x, mu);
  Var var = mean(square(centered), -1, /*keepdim=*/true);
  return div(centered, sqrt(add_scalar(var, eps)));
}

// Mean over every axis but the last, kept as size 1: (..., C) -> (1, ..., 1, C).
// Every leading slice has the same size, so the mean of means is the overall mean.
Var mean_over_rows(const Var& x) {
  Var m = x;
  for (int axis = 0; axis + 1 < x.dim(); ++axis) m = mean(m, axis, /*keepdim=*/true);
  return m;
}

}  // namespace

Var layer_norm(const Var& x, const Var& gamma, const Var& beta, double eps) {
  return affine(standardize_last(x, eps), gamma, beta);
}

Var rms_norm(const Var& x, const Var& weight, double eps, bool unit_offset) {
  Var mean_square = mean(square(x), -1, /*keepdim=*/true);
  Var xhat = div(x, sqrt(add_scalar(mean_square, eps)));
  if (!weight.defined()) return xhat;
  return mul(xhat, unit_offset ? add_scalar(weight, 1.0) : weight);
}

Var group_norm(const Var& x, const Var& gamma, const Var& beta, int64_t groups, double eps) {
  const int64_t C = x.size(-1);
  NL_CHECK(groups > 0 && C % groups == 0, "reference::group_norm", "{} groups do not divide C = {}",
           groups, C);
  Shape grouped(x.shape().begin(), x.shape().end() - 1);
  grouped.push_back(groups);
  grouped.push_back(C / groups);
  Var xhat = reshape(standardize_last(reshape(x, grouped), eps), x.shape());
  return affine(xhat, gamma, beta);
}

Var batch_norm(const Var& x, const Var& gamma, const Var& beta, double eps) {
  Var centered = sub(x, mean_over_rows(x));
  Var var = mean_over_rows(square(centered));
  return affine(div(centered, sqrt(add_scalar(var, eps))), gamma, beta);
}

}  // namespace normlab::reference
