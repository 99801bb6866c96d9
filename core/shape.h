// Shapes and strides (in elements), row-major.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace normlab {

using Shape = std::vector<int64_t>;

// Sizes are int64, and every product of sizes is checked: a result beyond 2^63 - 1 throws instead
// of wrapping around (a wrapped size allocates a small buffer that kernels then write far past).
// checked_mul: a * b for sizes a, b >= 0; throws "[op] <what> = a * b overflows int64 (...)".
int64_t checked_mul(int64_t a, int64_t b, std::string_view op, std::string_view what);
// The number of elements; throws "[op] negative dimension in shape (...)" or "[op] shape (...) has
// more than 2^63 - 1 elements". The product of the non-zero dimensions must fit, so that every
// stride and partial product of a valid shape fits too.
int64_t numel_of(const Shape& shape, std::string_view op = "shape");
Shape contiguous_strides(const Shape& shape);
std::string shape_str(const Shape& shape);  // "(2, 3, 4)"

// Numpy broadcasting of two shapes; throws "[op] cannot broadcast (a) with (b)".
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Normalises a possibly negative axis; throws "[op] axis 3 out of range for 2-d tensor".
int normalize_axis(int axis, int ndim, const char* op);

}  // namespace normlab
