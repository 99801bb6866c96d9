// Reductions. reduce_axis views x as (outer, n, inner) around `axis`.
// sum_to_shape is the single un-broadcast used by every broadcasting op's backward:
//   out[j] = sum of x[i] over all i that broadcast onto j.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/cpu/cpu_backend.h"
#include "core/cpu/half_convert.h"

namespace normlab {

namespace {

// A double accumulator stored as T. Half goes through float32, as the float32 kernel's result
// rounded once: the staging rule (cpu_half_staging.h), bit for bit.
template <typename T> T store_sum(double v) {
  if constexpr (is_half_v<T>) return store_float<T>(static_cast<float>(v));
  else return static_cast<T>(v);
}

// Columns per task of the (outer, n, inner) walk: bias gradients are one (rows, C) matrix
// (outer 1), so the tasks are column blocks, not just the outer index.
constexpr int64_t kColumnBlock = 128;

// out[o, i] = op over j of x[o, j, i], for i in [c0, c1): rows of x walked contiguously (a column-wise
// walk would touch a new cache line per element), each column summed in j order.
template <typename T>
void reduce_columns(ReduceOp op, const T* x, T* out, int64_t n, int64_t inner, int64_t o, int64_t c0, int64_t c1) {
  double acc[kColumnBlock];
  const int64_t width = c1 - c0;
  std::fill(acc, acc + width, op == ReduceOp::Max ? -INFINITY : 0.0);
  const T* base = x + o * n * inner + c0;
  // A 16-bit row is converted by the vector converter first (exact): float16's one-element
  // conversion is a scalar instruction that kept this loop scalar.
  using Row = std::conditional_t<is_half_v<T>, float, T>;
  Row converted[is_half_v<T> ? kColumnBlock : 1];
  for (int64_t j = 0; j < n; ++j) {
    const Row* row;
    if constexpr (is_half_v<T>) {
      to_float(base + j * inner, converted, width);
      row = converted;
    } else {
      row = base + j * inner;
    }
    if (op == ReduceOp::Max) {
      for (int64_t i = 0; i < width; ++i) acc[i] = std::max(acc[i], as_double(row[i]));
    } else {
      for (int64_t i = 0; i < width; ++i) acc[i] += as_double(row[i]);
    }
  }
  const double scale = op == ReduceOp::Mean ? 1.0 / static_cast<double>(n) : 1.0;
  for (int64_t i = 0; i < width; ++i) out[o * inner + c0 + i] = store_sum<T>(acc[i] * scale);
}

}  // namespace

// Reads bfloat16/float16 directly (accumulating in double like every dtype).
void CpuBackend::reduce_axis(ReduceOp op, const Tensor& x, int axis, Tensor& out) {
  const int ax = normalize_axis(axis, x.dim(), "reduce");
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < ax; ++d) outer *= x.shape()[d];
  for (int d = ax + 1; d < x.dim(); ++d) inner *= x.shape()[d];
  const int64_t n = x.shape()[ax];
  dispatch_floating_or_half(x.dtype(), "reduce", [&](auto t) {
    using T = decltype(t);
    const T* xp = x.data<T>();
    T* op_ = out.data<T>();
    if (inner == 1) {  // reduce the last axis: one contiguous run per output
#pragma omp parallel for if (x.numel() > kParallelElements)
      for (int64_t o = 0; o < outer; ++o) {
        const T* row = xp + o * n;
        double acc = op == ReduceOp::Max ? -INFINITY : 0.0;
        for (int64_t j = 0; j < n; ++j) acc = op == ReduceOp::Max ? std::max(acc, as_double(row[j])) : acc + as_double(row[j]);
        op_[o] = store_sum<T>(op == ReduceOp::Mean ? acc / static_cast<double>(n) : acc);
      }
      return;
    }
    const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
#pragma omp parallel for if (x.numel() > kParallelElements)
    for (int64_t task = 0; task < outer * blocks; ++task) {
      const int64_t o = task / blocks, c0 = (task % blocks) * kColumnBlock;
      reduce_columns(op, xp, op_, n, inner, o, c0, std::min(inner, c0 + kColumnBlock));
    }
  });
}

void CpuBackend::sum_to_shape(const Tensor& x, Tensor& out) {
  const Shape& xs = x.shape();
  const Shape& os = out.shape();
  NL_CHECK(os.size() <= xs.size(), "sum_to_shape", "cannot reduce {} to {}", shape_str(xs), shape_str(os));
  const size_t off = xs.size() - os.size();
  for (size_t i = 0; i < os.size(); ++i)
    NL_CHECK(os[i] == xs[off + i] || os[i] == 1, "sum_to_shape", "cannot reduce {} to {}",
             shape_str(xs), shape_str(os));
  dispatch_floating(x.dtype(), "sum_to_shape", [&](auto t) {
    using T = decltype(t);
    const T* xp = x.data<T>();
    T* o = out.data<T>();
    const int64_t n = x.numel(), m = out.numel();
    // Fast path: out is a trailing block of x (bias gradients): sum rows.
    if (std::equal(os.rbegin(), os.rend(), xs.rbegin())) {
      const int64_t rows = n / std::max<int64_t>(m, 1);
      std::vector<double> acc(static_cast<size_t>(m), 0.0);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < m; ++j) acc[j] += xp[r * m + j];
      for (int64_t j = 0; j < m; ++j) o[j] = static_cast<T>(acc[j]);
      return;
    }
    // General path: map every x index to its out index.
    Shape ostrides(xs.size(), 0);
    const Shape own = contiguous_strides(os);
    for (size_t i = off; i < xs.size(); ++i) ostrides[i] = os[i - off] == 1 ? 0 : own[i - off];
    std::vector<double> acc(static_cast<size_t>(m), 0.0);
    const int nd = static_cast<int>(xs.size());
    std::vector<int64_t> idx(nd, 0);
    int64_t oo = 0;
    for (int64_t i = 0; i < n; ++i) {
      acc[oo] += xp[i];
      for (int d = nd - 1; d >= 0; --d) {
        oo += ostrides[d];
        if (++idx[d] < xs[d]) break;
        oo -= ostrides[d] * xs[d];
        idx[d] = 0;
      }
    }
    for (int64_t j = 0; j < m; ++j) o[j] = static_cast<T>(acc[j]);
  });
}

double CpuBackend::sum_squares(const Tensor& x) {
  return dispatch_floating_or_half(x.dtype(), "sum_squares", [&](auto t) {
    using T = decltype(t);
    const T* p = x.data<T>();
    const int64_t n = x.numel();
    // Fixed blocks, each a vectorised double sum, added in block order: the result does not depend
    // on the thread count (it feeds gradient clipping, so training would otherwise).
    constexpr int64_t kBlock = 1 << 14;
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    std::vector<double> partial(static_cast<size_t>(blocks), 0.0);
#pragma omp parallel for if (n > kParallelElements)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t i1 = std::min(n, (b + 1) * kBlock);
      double s = 0.0;
#pragma omp simd reduction(+ : s)
      for (int64_t i = b * kBlock; i < i1; ++i) s += as_double(p[i]) * as_double(p[i]);
      partial[b] = s;
    }
    double s = 0.0;
    for (double v : partial) s += v;
    return s;
  });
}

bool CpuBackend::all_finite(const Tensor& x) {
  return dispatch_floating_or_half(x.dtype(), "all_finite", [&](auto t) {
    using T = decltype(t);
    const T* p = x.data<T>();
    const int64_t n = x.numel();
    bool ok = true;
    for (int64_t i = 0; i < n; ++i) ok &= std::isfinite(as_double(p[i]));
    return ok;
  });
}

}  // namespace normlab
