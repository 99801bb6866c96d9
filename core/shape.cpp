#include "core/shape.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"

namespace normlab {

int64_t checked_mul(int64_t a, int64_t b, std::string_view op, std::string_view what) {
  NL_CHECK(a >= 0 && b >= 0, op, "{} = {} * {}: a size cannot be negative", what, a, b);
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product))
    fail(op, "{} = {} * {} overflows int64 (more than 2^63 - 1)", what, a, b);
  return product;
}

int64_t numel_of(const Shape& shape, std::string_view op) {
  int64_t nonzero = 1;
  bool empty = false;
  for (int64_t d : shape) {
    NL_CHECK(d >= 0, op, "negative dimension in shape {}", shape_str(shape));
    if (d == 0) empty = true;
    else if (__builtin_mul_overflow(nonzero, d, &nonzero))
      fail(op, "shape {} has more than 2^63 - 1 elements (int64 overflow)", shape_str(shape));
  }
  return empty ? 0 : nonzero;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s = checked_mul(s, shape[i], "shape", "stride");
  }
  return strides;
}

std::string shape_str(const Shape& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      fail(op, "cannot broadcast shapes {} and {}", shape_str(a), shape_str(b));
    out[i] = da == 1 ? db : da;
  }
  numel_of(out, op);  // the broadcast result must be countable
  return out;
}

int normalize_axis(int axis, int ndim, const char* op) {
  int a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim) fail(op, "axis {} out of range for a {}-d tensor", axis, ndim);
  return a;
}

}  // namespace normlab
