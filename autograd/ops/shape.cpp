// Shape ops: they move elements without changing them, so each backward moves g back the same way.
// Notation: y = f(x), g = dL/dy (y's shape), dx = dL/dx (x's shape).
#include "autograd/ops.h"
#include "core/ops.h"

namespace normlab {

// y = x copied to another device. Copying changes no value, so dL/dx_i = dL/dy_i:
//   dx = g copied back to x's device.
Var to_device(const Var& x, Device device) {
  const Device from = x.value().device();
  return record("to_device", {x}, x.value().to(device), [from](const Tensor& g) -> Grads { return {g.to(from)}; });
}

// y = x converted to dtype (rounded to nearest even when narrowing, exact when widening). The
// rounding is treated as the identity in the backward (its derivative is 1 almost everywhere at the
// scale of the data; zero between representable values would stop all learning), so
//   dx = g converted back to x's dtype.
// A cast to x's own dtype records nothing and returns x.
Var cast(const Var& x, DType dtype) {
  NL_CHECK(is_floating(dtype) && is_floating(x.value().dtype()), "cast",
           "casts between floating dtypes only, got {} -> {}", dtype_name(x.value().dtype()),
           dtype_name(dtype));
  if (x.value().dtype() == dtype) return x;
  const DType from = x.value().dtype();
  return record("cast", {x}, x.value().to(dtype), [from](const Tensor& g) -> Grads { return {g.to(from)}; });
}

// y = x viewed with a new shape (a view: it shares x's storage when x is contiguous).
// Every element keeps its row-major index, so dL/dx_i = dL/dy_i:   dx = g.reshape(x.shape).
Var reshape(const Var& x, const Shape& shape) {
  Tensor y = x.value().reshape(shape);
  const Shape x_shape = x.shape();
  return record("reshape", {x}, y, [x_shape](const Tensor& g) -> Grads {
    return {g.reshape(x_shape)};
  });
}

// y = x with axes a and b swapped, materialised contiguous: y[..i..j..] = x[..j..i..].
// Swapping is its own inverse:   dx = g with axes a and b swapped (contiguous).
Var transpose(const Var& x, int a, int b) {
  const int na = normalize_axis(a, x.dim(), "transpose"), nb = normalize_axis(b, x.dim(), "transpose");
  Tensor y = x.value().transpose(na, nb).contiguous();
  return record("transpose", {x}, y, [na, nb](const Tensor& g) -> Grads {
    return {g.transpose(na, nb).contiguous()};
  });
}

// x (B, T, C) -> (B, T, H, D) -> swap T and H -> y (B, H, T, D), D = C / H.
// y[b, h, t, d] = x[b, t, h D + d], a permutation, so dx is g permuted back:
//   g (B, H, T, D) -> swap H and T -> (B, T, H, D) -> reshape (B, T, C).
Var split_heads(const Var& x, int64_t heads) {
  NL_CHECK(x.dim() == 3, "split_heads", "expected (B, T, C), got {}", shape_str(x.shape()));
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
  NL_CHECK(heads > 0 && C % heads == 0, "split_heads", "C = {} of {} is not divisible by {} heads", C,
           shape_str(x.shape()), heads);
  const int64_t D = C / heads;
  Tensor y = x.value().reshape({B, T, heads, D}).transpose(1, 2).contiguous();
  return record("split_heads", {x}, y, [B, T, C](const Tensor& g) -> Grads {
    return {g.transpose(1, 2).contiguous().reshape({B, T, C})};
  });
}

// x (B, H, T, D) -> swap H and T -> (B, T, H, D) -> y (B, T, H D): the inverse of split_heads.
//   dx = g (B, T, C) -> reshape (B, T, H, D) -> swap T and H -> (B, H, T, D).
Var merge_heads(const Var& x) {
  NL_CHECK(x.dim() == 4, "merge_heads", "expected (B, H, T, D), got {}", shape_str(x.shape()));
  const int64_t B = x.size(0), H = x.size(1), T = x.size(2), D = x.size(3);
  Tensor y = x.value().transpose(1, 2).contiguous().reshape({B, T, H * D});
  return record("merge_heads", {x}, y, [B, H, T, D](const Tensor& g) -> Grads {
    return {g.reshape({B, T, H, D}).transpose(1, 2).contiguous()};
  });
}

// y = x[..., s : s + L] (..., L) of x (..., C).
// dL/dx[..., c] = g[..., c - s] for c in [s, s + L), and 0 elsewhere (those columns do not reach y):
//   dx = pad_last(g, s, C), g written into a zero tensor's slice.
Var narrow_last(const Var& x, int64_t start, int64_t length) {
  Tensor y = ops::narrow_last(x.value(), start, length);
  const int64_t cols = x.size(-1);
  return record("narrow_last", {x}, y, [start, cols](const Tensor& g) -> Grads {
    return {ops::pad_last(g, start, cols)};
  });
}

}  // namespace normlab
