// Shapes and strides (in elements), row-major.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace normlab {

using Shape = std::vector<int64_t>;

int64_t numel_of(const Shape& shape);
Shape contiguous_strides(const Shape& shape);
std::string shape_str(const Shape& shape);  // "(2, 3, 4)"

// Numpy broadcasting of two shapes; throws "[op] cannot broadcast (a) with (b)".
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Normalises a possibly negative axis; throws "[op] axis 3 out of range for 2-d tensor".
int normalize_axis(int axis, int ndim, const char* op);

}  // namespace normlab
