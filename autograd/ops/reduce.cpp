// Reductions.
//   y = sum_j x[.., j, ..] over `axis`       dx = g broadcast back along axis
//   y = mean over axis (n elements)          dx = g / n broadcast back
//   sum_all / mean_all: the same over every element, y of shape ().
#include "autograd/ops.h"
#include "core/ops.h"

namespace normlab {

// g (reduced shape) -> dx (x's shape): re-insert the axis as size 1 and broadcast.
static Tensor expand_back(const Tensor& g, const Shape& x_shape, int axis, double factor) {
  Shape kept = x_shape;
  kept[axis] = 1;
  Tensor gk = g.reshape(kept);
  Tensor zeros = Tensor::zeros(x_shape, g.dtype(), g.device());
  Tensor dx = ops::add(zeros, gk);
  return factor == 1.0 ? dx : ops::scale(dx, factor);
}

static Var reduce_op(const char* name, ReduceOp op, const Var& x, int axis, bool keepdim) {
  const int ax = normalize_axis(axis, x.dim(), name);
  Tensor y = ops::reduce(op, x.value(), ax, keepdim);
  const Shape x_shape = x.shape();
  const double factor = op == ReduceOp::Mean ? 1.0 / static_cast<double>(x_shape[ax]) : 1.0;
  return record(name, {x}, y, [x_shape, ax, factor](const Tensor& g) -> Grads {
    return {expand_back(g, x_shape, ax, factor)};
  });
}

Var sum(const Var& x, int axis, bool keepdim) { return reduce_op("sum", ReduceOp::Sum, x, axis, keepdim); }
Var mean(const Var& x, int axis, bool keepdim) { return reduce_op("mean", ReduceOp::Mean, x, axis, keepdim); }

static Var reduce_all(const char* name, ReduceOp op, const Var& x) {
  const Shape x_shape = x.shape();
  Tensor flat = x.value().reshape({x.value().numel()});
  Tensor y = ops::reduce(op, flat, 0, false);  // shape ()
  const double factor = op == ReduceOp::Mean ? 1.0 / static_cast<double>(flat.numel()) : 1.0;
  return record(name, {x}, y, [x_shape, factor](const Tensor& g) -> Grads {
    Tensor dx = ops::add(Tensor::zeros(x_shape, g.dtype(), g.device()), g);
    return {factor == 1.0 ? dx : ops::scale(dx, factor)};
  });
}

Var sum_all(const Var& x) { return reduce_all("sum_all", ReduceOp::Sum, x); }
Var mean_all(const Var& x) { return reduce_all("mean_all", ReduceOp::Mean, x); }

}  // namespace normlab
