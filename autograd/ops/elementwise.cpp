// Elementwise ops. Notation: y = f(a, b), g = dL/dy; every gradient of a broadcast input is
// summed back to its shape by ops::sum_to (the one un-broadcast).
#include "autograd/ops.h"
#include "core/ops.h"

namespace normlab {

static Tensor grad_if(const Var& v, const Tensor& g) {
  return v.requires_grad() ? ops::sum_to(g, v.shape()) : Tensor();
}

// y = a + b      da = g, db = g
Var add(const Var& a, const Var& b) {
  Tensor y = ops::add(a.value(), b.value());
  return record("add", {a, b}, y, [a, b](const Tensor& g) -> Grads {
    return {grad_if(a, g), grad_if(b, g)};
  });
}

// y = a - b      da = g, db = -g
Var sub(const Var& a, const Var& b) {
  Tensor y = ops::sub(a.value(), b.value());
  return record("sub", {a, b}, y, [a, b](const Tensor& g) -> Grads {
    return {grad_if(a, g), b.requires_grad() ? ops::sum_to(ops::neg(g), b.shape()) : Tensor()};
  });
}

// y = a * b      da = g b, db = g a        (saves a and b)
Var mul(const Var& a, const Var& b) {
  Tensor y = ops::mul(a.value(), b.value());
  Tensor av = a.value(), bv = b.value();
  return record("mul", {a, b}, y, [a, b, av, bv](const Tensor& g) -> Grads {
    return {a.requires_grad() ? ops::sum_to(ops::mul(g, bv), av.shape()) : Tensor(),
            b.requires_grad() ? ops::sum_to(ops::mul(g, av), bv.shape()) : Tensor()};
  });
}

// y = a / b      da = g / b, db = -g a / b^2 = -g y / b     (saves b and y)
Var div(const Var& a, const Var& b) {
  Tensor y = ops::div(a.value(), b.value());
  Tensor bv = b.value();
  return record("div", {a, b}, y, [a, b, bv, y](const Tensor& g) -> Grads {
    Tensor da = a.requires_grad() ? ops::sum_to(ops::div(g, bv), a.shape()) : Tensor();
    Tensor db = b.requires_grad()
                    ? ops::sum_to(ops::neg(ops::div(ops::mul(g, y), bv)), bv.shape())
                    : Tensor();
    return {da, db};
  });
}

// y = x + branch (same shape)      dx = g, dbranch = g
// The residual stream's gradient is the sum of this skip path and the path through the branch:
// the tape adds them when x's other uses report their gradients.
Var residual_add(const Var& x, const Var& branch) {
  check_same_shape(x.value(), branch.value(), "residual_add", "x", "branch");
  Tensor y = ops::add(x.value(), branch.value());
  return record("residual_add", {x, branch}, y, [](const Tensor& g) -> Grads { return {g, g}; });
}

// Unary y = f(x): dx = g * f'(x), with f' in core/cpu/cpu_elementwise.cpp's table.
static Var unary_op(const char* name, UnaryOp op, const Var& x, double alpha = 0.0) {
  Tensor y = ops::unary(op, x.value(), alpha);
  Tensor xv = x.value();
  return record(name, {x}, y, [op, xv, y, alpha](const Tensor& g) -> Grads {
    return {ops::unary_backward(op, xv, y, g, alpha)};
  });
}

Var scale(const Var& x, double alpha) { return unary_op("scale", UnaryOp::Scale, x, alpha); }
Var add_scalar(const Var& x, double alpha) { return unary_op("add_scalar", UnaryOp::AddScalar, x, alpha); }
Var neg(const Var& x) { return unary_op("neg", UnaryOp::Neg, x); }
Var exp(const Var& x) { return unary_op("exp", UnaryOp::Exp, x); }
Var log(const Var& x) { return unary_op("log", UnaryOp::Log, x); }
Var sqrt(const Var& x) { return unary_op("sqrt", UnaryOp::Sqrt, x); }
Var square(const Var& x) { return unary_op("square", UnaryOp::Square, x); }
Var tanh(const Var& x) { return unary_op("tanh", UnaryOp::Tanh, x); }
Var relu(const Var& x) { return unary_op("relu", UnaryOp::Relu, x); }
Var gelu(const Var& x) { return unary_op("gelu", UnaryOp::Gelu, x); }
Var silu(const Var& x) { return unary_op("silu", UnaryOp::Silu, x); }

}  // namespace normlab
