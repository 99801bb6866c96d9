#include <cstdio>
#include <cmath>
#include <algorithm>
#include <cblas.h>
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "core/cpu/cpu_allocator.h"
#include "core/cpu/cpu_backend.h"
#include "core/cpu/cpu_half_staging.h"
#include "core/cpu/half_convert.h"

namespace normlab {

// Host memory comes from a caching allocator (core/cpu/cpu_allocator.h), capped at 4 GiB of
// cached blocks. It is never destroyed: tensors in static storage may be freed after main returns.
static HostBlockCache& host_cache() {
  static auto* cache = new HostBlockCache(size_t{4} << 30);
  return *cache;
}

void* CpuBackend::allocate(size_t bytes) { return host_cache().allocate(bytes); }
void CpuBackend::deallocate(void* ptr, size_t bytes) noexcept { host_cache().release(ptr, bytes); }

HostMemoryStats host_memory_stats() {
  const HostBlockCache& c = host_cache();
  return {c.in_use_bytes(), c.peak_in_use_bytes(), c.cached_bytes()};
}
void reset_host_memory_peak() { host_cache().reset_peak(); }
void CpuBackend::copy_to_host(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
void CpuBackend::copy_from_host(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }

void CpuBackend::fill(Tensor& out, double value) {
  const auto fill_with = [&out](auto v) {
    auto* p = out.data<decltype(v)>();
    for_each_chunk(out.numel(), kParallelElements, [&](int64_t i, int64_t len) { std::fill_n(p + i, len, v); });
  };
  switch (out.dtype()) {
    case DType::F32: return fill_with(static_cast<float>(value));
    case DType::F64: return fill_with(value);
    case DType::I32: return fill_with(static_cast<int32_t>(value));
    case DType::BF16: return fill_with(convert_element<bfloat16>(value));
    case DType::F16: return fill_with(convert_element<float16>(value));
    default: fail("fill", "unsupported dtype {}", dtype_name(out.dtype()));
  }
}

namespace {

// Calls f(begin, end) on one range of [0, rows) per OpenMP thread when the copy is large enough to
// pay for a parallel region (rows * row_elements > kParallelElements), else once on all of it.
// A copy moves every element unchanged, so the split cannot change a result.
template <typename F> void for_each_row_range(int64_t rows, int64_t row_elements, F&& f) {
  const int threads = num_threads();
  if (threads == 1 || rows < 2 || rows * row_elements <= kParallelElements) return f(int64_t{0}, rows);
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), team = omp_get_num_threads();
    f(rows * t / team, rows * (t + 1) / team);
  }
}

// Rows [row_begin, row_end) of a strided tensor (a row: the last axis) into dst, which is
// contiguous and indexed like the whole tensor.
template <typename S, typename D>
void strided_copy_rows(const S* src, const Shape& shape, const Shape& strides, D* dst, int64_t row_begin,
                       int64_t row_end) {
  const int nd = static_cast<int>(shape.size());
  const int64_t inner = shape[nd - 1], inner_stride = strides[nd - 1];
  std::vector<int64_t> index(nd, 0);
  int64_t offset = 0;
  for (int64_t d = nd - 2, rest = row_begin; d >= 0; --d) {  // the multi-index of row_begin
    index[d] = rest % shape[d];
    rest /= shape[d];
    offset += index[d] * strides[d];
  }
  for (int64_t row = row_begin; row < row_end; ++row) {
    D* out = dst + row * inner;
    if constexpr (std::is_same_v<S, D>) {
      if (inner_stride == 1) {  // a contiguous run (head split/merge, broadcast rows): memcpy
        std::memcpy(out, src + offset, static_cast<size_t>(inner) * sizeof(D));
      } else {
        for (int64_t j = 0; j < inner; ++j) out[j] = src[offset + j * inner_stride];
      }
    } else {
      for (int64_t j = 0; j < inner; ++j) out[j] = convert_element<D>(src[offset + j * inner_stride]);
    }
    for (int d = nd - 2; d >= 0; --d) {  // advance the multi-index over the outer axes
      offset += strides[d];
      if (++index[d] < shape[d]) break;
      offset -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
}

template <typename S, typename D>
void strided_copy(const S* src, const Shape& shape, const Shape& strides, D* dst) {
  if (shape.empty()) {
    dst[0] = convert_element<D>(src[0]);
    return;
  }
  const int64_t n = numel_of(shape), inner = shape.back();
  if (n == 0) return;
  for_each_row_range(n / inner, inner, [&](int64_t begin, int64_t end) {
    strided_copy_rows(src, shape, strides, dst, begin, end);
  });
}

template <typename S>
void copy_from(const Tensor& src, Tensor& dst) {
  const S* s = static_cast<const S*>(src.raw_data());
  switch (dst.dtype()) {
    case DType::F32: strided_copy(s, src.shape(), src.strides(), dst.data<float>()); break;
    case DType::F64: strided_copy(s, src.shape(), src.strides(), dst.data<double>()); break;
    case DType::I32: strided_copy(s, src.shape(), src.strides(), dst.data<int32_t>()); break;
    case DType::BF16: strided_copy(s, src.shape(), src.strides(), dst.data<bfloat16>()); break;
    case DType::F16: strided_copy(s, src.shape(), src.strides(), dst.data<float16>()); break;
    default: fail("copy", "unsupported destination dtype {}", dtype_name(dst.dtype()));
  }
}

// A contiguous float32 <-> 16-bit conversion (casts under autocast, the staging layer): in vector
// registers, in chunks over the threads. False for any other pair of dtypes or layouts.
template <typename H> bool convert_contiguous_half(const Tensor& src, Tensor& dst) {
  const int64_t n = src.numel();
  if (src.dtype() == dtype_of<H>() && dst.dtype() == DType::F32) {
    const H* s = src.data<H>();
    float* d = dst.data<float>();
    for_each_chunk(n, kParallelElements, [&](int64_t i, int64_t len) { to_float(s + i, d + i, len); });
    return true;
  }
  if (src.dtype() == DType::F32 && dst.dtype() == dtype_of<H>()) {
    const float* s = src.data<float>();
    H* d = dst.data<H>();
    for_each_chunk(n, kParallelElements, [&](int64_t i, int64_t len) { from_float(s + i, d + i, len); });
    return true;
  }
  return false;
}

}  // namespace

void CpuBackend::copy_strided(const Tensor& src, Tensor& dst) {
  check_same_shape(src, dst, "copy", "src", "dst");
  if (src.dtype() == dst.dtype() && src.is_contiguous()) {
    const size_t elem = dtype_size(src.dtype());
    const char* s = static_cast<const char*>(src.raw_data());
    char* d = static_cast<char*>(dst.raw_data());
    for_each_chunk(src.numel(), kParallelElements, [&](int64_t i, int64_t len) {
      std::memcpy(d + i * elem, s + i * elem, static_cast<size_t>(len) * elem);
    });
    return;
  }
  if (src.is_contiguous() && dst.is_contiguous() &&
      (convert_contiguous_half<bfloat16>(src, dst) || convert_contiguous_half<float16>(src, dst)))
    return;
  switch (src.dtype()) {
    case DType::F32: copy_from<float>(src, dst); break;
    case DType::F64: copy_from<double>(src, dst); break;
    case DType::I32: copy_from<int32_t>(src, dst); break;
    case DType::BF16: copy_from<bfloat16>(src, dst); break;
    case DType::F16: copy_from<float16>(src, dst); break;
    default: fail("copy", "unsupported source dtype {}", dtype_name(src.dtype()));
  }
}

void CpuBackend::copy_columns(const Tensor& src, int64_t src_start, Tensor& dst, int64_t dst_start,
                              int64_t length) {
  const int64_t src_cols = src.dim() == 0 ? 1 : src.shape().back();
  const int64_t dst_cols = dst.dim() == 0 ? 1 : dst.shape().back();
  const int64_t rows = src_cols == 0 ? 0 : src.numel() / src_cols;
  if (length == 0 || rows == 0) return;
  const size_t elem = dtype_size(src.dtype());
  const char* s = static_cast<const char*>(src.raw_data());
  char* d = static_cast<char*>(dst.raw_data());
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(d + (r * dst_cols + dst_start) * elem, s + (r * src_cols + src_start) * elem,
                static_cast<size_t>(length) * elem);
}

// The float kernels behind the half-precision staging layer (core/cpu/cpu_half_staging.h). Never
// destroyed, like the host cache: tensors in static storage may be freed after main returns.
Backend& cpu_backend() {
  static auto* kernels = new CpuBackend;
  static auto* backend = new HalfStagingBackend(*kernels);
  return *backend;
}

Backend& backend_for(Device device) {
  return device.kind == DeviceKind::CPU ? cpu_backend() : cuda_backend();
}

static int g_threads = 0;

int default_thread_count(int cores, double load_1min) {
  const int busy = static_cast<int>(std::lround(std::max(0.0, load_1min)));
  return std::clamp(cores - busy, 1, std::max(cores, 1));
}

static double load_average_1min() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  double load = 0;
  if (f != nullptr) {
    if (std::fscanf(f, "%lf", &load) != 1) load = 0;
    std::fclose(f);
  }
  return load;
}

void set_num_threads(int n) {
  if (n <= 0) n = default_thread_count(omp_get_num_procs(), load_average_1min());
  g_threads = n;
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

int num_threads() { return g_threads > 0 ? g_threads : omp_get_max_threads(); }

}  // namespace normlab
