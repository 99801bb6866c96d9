// Normalization ops: each is ONE node on the tape (a fused forward kernel from core/norm_ops.h and
// an analytic backward), never a chain of elementwise nodes. Full derivations: docs/derivations.md;
// the plain-ops versions they are tested against: autograd/norm_reference.h.
//
// Notation for one normalized segment of n values (a row for LayerNorm/RMSNorm, a group of a row for
// GroupNorm, a channel over all rows for BatchNorm); g = dL/dy:
//   xhat = (x - mean) rstd,  rstd = 1/sqrt(var + eps),  y = gamma xhat + beta,  dxhat = g gamma.
// gamma/beta (RMSNorm: weight) may be undefined Vars: no affine; they are then not tape inputs.
#include "autograd/ops.h"
#include "core/norm_ops.h"
#include "core/ops.h"

namespace normlab {

namespace {

// The tape inputs of a norm: x, then each defined parameter. Remembers where each one went.
struct NormInputs {
  std::vector<Var> vars;
  int gamma_at = -1, beta_at = -1;
  NormInputs(const Var& x, const Var& gamma, const Var& beta) : vars{x} {
    NL_CHECK(x.defined(), "norm", "x is undefined");
    if (gamma.defined()) { gamma_at = static_cast<int>(vars.size()); vars.push_back(gamma); }
    if (beta.defined()) { beta_at = static_cast<int>(vars.size()); vars.push_back(beta); }
  }
  bool wants(int at) const { return at >= 0 && vars[at].requires_grad(); }
  // Lays the backward results out in input order; gradients nobody asked for stay undefined.
  Grads grads(const ops::NormBackward& b) const {
    Grads out(vars.size());
    if (vars[0].requires_grad()) out[0] = b.dx;
    if (wants(gamma_at)) out[gamma_at] = b.dgamma;
    if (wants(beta_at)) out[beta_at] = b.dbeta;
    return out;
  }
};

Tensor value_or_undefined(const Var& v) { return v.defined() ? v.value() : Tensor(); }

}  // namespace

// LayerNorm over the last axis. x (..., C), gamma/beta (C,); per row: mean, var (biased), rstd.
//   y_j = gamma_j xhat_j + beta_j,  xhat_j = (x_j - mean) rstd
// d xhat_i / d x_k = rstd (delta_ik - 1/C - xhat_i xhat_k / C), so per row
//   dx = rstd (dxhat - mean_j(dxhat_j) - xhat mean_j(dxhat_j xhat_j))        (..., C)
//   dgamma = sum over rows of g xhat,  dbeta = sum over rows of g            (C,)
// Saved: x, gamma, mean (...,), rstd (...,).
Var layer_norm(const Var& x, const Var& gamma, const Var& beta, double eps) {
  NormInputs in(x, gamma, beta);
  const Tensor gv = value_or_undefined(gamma);
  ops::NormForward f = ops::layer_norm(x.value(), gv, value_or_undefined(beta), eps);
  const ops::NormForward saved{Tensor(), f.mean, f.rstd};
  const Tensor xv = x.value();
  return record("layer_norm", in.vars, f.y, [in, xv, gv, saved](const Tensor& g) -> Grads {
    return in.grads(ops::layer_norm_backward(g, xv, gv, saved, in.wants(in.gamma_at), in.wants(in.beta_at)));
  });
}

// RMSNorm over the last axis: y_j = s_j x_j rstd, rstd = (mean_j x_j^2 + eps)^(-1/2),
// s = weight, or 1 + weight when unit_offset (Gemma: the stored zero means scale 1).
// d rstd / d x_k = -rstd^3 x_k / C, so with xhat = x rstd and dxhat = g s:
//   dx = rstd (dxhat - xhat mean_j(dxhat_j xhat_j))                            (..., C)
//   dweight = sum over rows of g xhat   (d s / d weight = 1 for both parametrizations)   (C,)
// Saved: x, weight, rstd (...,).
Var rms_norm(const Var& x, const Var& weight, double eps, bool unit_offset) {
  NormInputs in(x, weight, Var());
  const Tensor wv = value_or_undefined(weight);
  ops::NormForward f = ops::rms_norm(x.value(), wv, eps, unit_offset);
  const ops::NormForward saved{Tensor(), Tensor(), f.rstd};
  const Tensor xv = x.value();
  return record("rms_norm", in.vars, f.y, [in, xv, wv, saved, unit_offset](const Tensor& g) -> Grads {
    return in.grads(ops::rms_norm_backward(g, xv, wv, saved, unit_offset, in.wants(in.gamma_at)));
  });
}

// GroupNorm: each row's C channels split into G contiguous groups of n = C/G; LayerNorm's math per
// group (mean, rstd: (..., G)), then the per-channel affine. Per group:
//   dx = rstd (dxhat - mean_group(dxhat) - xhat mean_group(dxhat xhat))          (..., C)
//   dgamma = sum over rows of g xhat,  dbeta = sum over rows of g                 (C,)
// Saved: x, gamma, mean, rstd.
Var group_norm(const Var& x, const Var& gamma, const Var& beta, int64_t groups, double eps) {
  NormInputs in(x, gamma, beta);
  const Tensor gv = value_or_undefined(gamma);
  ops::NormForward f = ops::group_norm(x.value(), gv, value_or_undefined(beta), groups, eps);
  const ops::NormForward saved{Tensor(), f.mean, f.rstd};
  const Tensor xv = x.value();
  return record("group_norm", in.vars, f.y, [in, xv, gv, saved, groups](const Tensor& g) -> Grads {
    return in.grads(ops::group_norm_backward(g, xv, gv, saved, groups, in.wants(in.gamma_at),
                                             in.wants(in.beta_at)));
  });
}

namespace {

// Eval-mode BatchNorm is a fixed per-channel affine map:
//   y = xhat gamma + beta,  xhat = (x - running_mean) inv,  inv = 1/sqrt(running_var + eps)
//   dx = g gamma inv,  dgamma = sum over rows of g xhat,  dbeta = sum over rows of g.
Var batch_norm_eval(const NormInputs& in, const Tensor& gamma, const Tensor& beta,
                    const Tensor& running_mean, const Tensor& running_var, double eps) {
  const Tensor& x = in.vars[0].value();
  const Tensor rm = running_mean.to(x.dtype()), rv = running_var.to(x.dtype());
  const Tensor inv = ops::div(Tensor::ones(rv.shape(), x.dtype(), x.device()),
                              ops::unary(UnaryOp::Sqrt, ops::unary(UnaryOp::AddScalar, rv, eps)));
  const Tensor xhat = ops::mul(ops::sub(x, rm), inv);  // (..., C)
  Tensor y = gamma.defined() ? ops::mul(xhat, gamma) : xhat;
  if (beta.defined()) y = ops::add(y, beta);
  const Tensor dx_scale = gamma.defined() ? ops::mul(inv, gamma) : inv;  // (C,)
  const Shape c_shape{x.size(-1)};
  return record("batch_norm", in.vars, y, [in, xhat, dx_scale, c_shape](const Tensor& g) -> Grads {
    ops::NormBackward b{ops::mul(g, dx_scale), Tensor(), Tensor()};
    if (in.wants(in.gamma_at)) b.dgamma = ops::sum_to(ops::mul(g, xhat), c_shape);
    if (in.wants(in.beta_at)) b.dbeta = ops::sum_to(g, c_shape);
    return in.grads(b);
  });
}

// r <- (1 - momentum) r + momentum batch, in place (r shares storage with the caller's tensor).
void blend_into(Tensor& running, const Tensor& batch, double momentum) {
  const Tensor b = batch.to(running.dtype());
  running.copy_(ops::add(ops::scale(running, 1.0 - momentum), ops::scale(b, momentum)));
}

}  // namespace

// BatchNorm, training: statistics per channel over all N rows (mean, biased var, rstd: (C,)).
// Every row of a channel shares mean and rstd, so the LayerNorm derivation applies along the
// column instead of the row:
//   dx = rstd (dxhat - mean_rows(dxhat) - xhat mean_rows(dxhat xhat))          (..., C)
//      = rstd gamma (g - dbeta/N - xhat dgamma/N)
//   dgamma = sum over rows of g xhat,  dbeta = sum over rows of g              (C,)
// Running statistics use the unbiased variance var N/(N-1), as PyTorch; var = 1/rstd^2 - eps.
// Saved: x, gamma, mean, rstd. Eval: batch_norm_eval above.
Var batch_norm(const Var& x, const Var& gamma, const Var& beta, Tensor running_mean,
               Tensor running_var, bool training, double momentum, double eps) {
  NormInputs in(x, gamma, beta);
  const Tensor& xv = x.value();
  const Tensor gv = value_or_undefined(gamma), bv = value_or_undefined(beta);
  ops::check_norm_input(xv, "batch_norm");
  NL_CHECK(running_mean.defined() == running_var.defined(), "batch_norm",
           "running_mean and running_var must both be given or both be undefined");
  if (running_mean.defined()) {
    for (const Tensor* t : {&running_mean, &running_var})
      NL_CHECK(t->shape() == Shape{xv.size(-1)} && t->is_contiguous(), "batch_norm",
               "running statistics must be contiguous of shape ({},) to match x {}, got {}",
               xv.size(-1), shape_str(xv.shape()), shape_str(t->shape()));
  }
  if (!training) {
    NL_CHECK(running_mean.defined(), "batch_norm", "eval mode needs running_mean and running_var");
    ops::check_norm_param(gv, xv, "batch_norm", "gamma");
    ops::check_norm_param(bv, xv, "batch_norm", "beta");
    NL_CHECK(eps >= 0, "batch_norm", "eps must be >= 0, got {}", eps);
    return batch_norm_eval(in, gv, bv, running_mean, running_var, eps);
  }
  ops::NormForward f = ops::batch_norm(xv, gv, bv, eps);
  if (running_mean.defined()) {
    const int64_t n = xv.numel() / xv.size(-1);
    NL_CHECK(n > 1, "batch_norm", "updating running statistics needs more than 1 row per channel, x is {}",
             shape_str(xv.shape()));
    NL_CHECK(momentum >= 0 && momentum <= 1, "batch_norm", "momentum must be in [0, 1], got {}", momentum);
    const Tensor ones = Tensor::ones(f.rstd.shape(), f.rstd.dtype(), f.rstd.device());
    const Tensor var = ops::unary(UnaryOp::AddScalar,
                                  ops::div(ones, ops::unary(UnaryOp::Square, f.rstd)), -eps);
    blend_into(running_mean, f.mean, momentum);
    blend_into(running_var, ops::scale(var, static_cast<double>(n) / static_cast<double>(n - 1)), momentum);
  }
  const ops::NormForward saved{Tensor(), f.mean, f.rstd};
  const Tensor xs = xv;
  return record("batch_norm", in.vars, f.y, [in, xs, gv, saved](const Tensor& g) -> Grads {
    return in.grads(ops::batch_norm_backward(g, xs, gv, saved, in.wants(in.gamma_at), in.wants(in.beta_at)));
  });
}

// The no-normalization baseline: y = x, dx = g. Recorded as its own node so that a model without
// normalization has the same structure (and tape names) as one with it.
Var identity_norm(const Var& x) {
  return record("identity_norm", {x}, x.value(), [](const Tensor& g) -> Grads { return {g}; });
}

}  // namespace normlab
