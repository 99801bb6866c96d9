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
  const int64_t n = out.numel();
  switch (out.dtype()) {
    case DType::F32: std::fill_n(out.data<float>(), n, static_cast<float>(value)); break;
    case DType::F64: std::fill_n(out.data<double>(), n, value); break;
    case DType::I32: std::fill_n(out.data<int32_t>(), n, static_cast<int32_t>(value)); break;
    case DType::BF16: std::fill_n(out.data<bfloat16>(), n, convert_element<bfloat16>(value)); break;
    case DType::F16: std::fill_n(out.data<float16>(), n, convert_element<float16>(value)); break;
    default: fail("fill", "unsupported dtype {}", dtype_name(out.dtype()));
  }
}

namespace {

template <typename S, typename D>
void strided_copy(const S* src, const Shape& shape, const Shape& strides, D* dst) {
  const int nd = static_cast<int>(shape.size());
  const int64_t n = numel_of(shape);
  if (nd == 0) {
    dst[0] = convert_element<D>(src[0]);
    return;
  }
  std::vector<int64_t> index(nd, 0);
  int64_t offset = 0;
  const int64_t inner = shape[nd - 1], inner_stride = strides[nd - 1];
  for (int64_t done = 0; done < n; done += inner) {
    if constexpr (std::is_same_v<S, D>) {
      if (inner_stride == 1) {  // a contiguous run (head split/merge, broadcast rows): memcpy
        std::memcpy(dst + done, src + offset, static_cast<size_t>(inner) * sizeof(D));
      } else {
        for (int64_t j = 0; j < inner; ++j) dst[done + j] = src[offset + j * inner_stride];
      }
    } else {
      for (int64_t j = 0; j < inner; ++j) dst[done + j] = convert_element<D>(src[offset + j * inner_stride]);
    }
    for (int d = nd - 2; d >= 0; --d) {  // advance the multi-index over the outer axes
      offset += strides[d];
      if (++index[d] < shape[d]) break;
      offset -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
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
    std::memcpy(dst.raw_data(), src.raw_data(), src.nbytes());
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

void set_num_threads(int n) {
  if (n <= 0) return;
  g_threads = n;
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

int num_threads() { return g_threads > 0 ? g_threads : omp_get_max_threads(); }

}  // namespace normlab
