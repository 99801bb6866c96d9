// CudaBackend: device discovery, the caching allocator, host<->device copies, fill and copies.
#include <algorithm>
#include <bit>
#include <cstring>
#include <new>

#include "core/cuda/cuda_backend.h"
#include "core/cuda/kernels.h"

namespace normlab {

void cuda_check(cudaError_t err, const char* call) {
  if (err == cudaSuccess) return;
  cudaGetLastError();  // clear a sticky-free error so that later calls are not blamed for it
  fail("cuda", "{} failed: {}", call, cudaGetErrorString(err));
}

void check_kernel(cudaError_t err, const char* kernel) {
  if (err == cudaSuccess) return;
  cudaGetLastError();
  fail("cuda", "{} kernel failed: {}", kernel, cudaGetErrorString(err));
}

namespace {

bool cuda_device_present() {
  static const bool available = [] {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
      cudaGetLastError();  // no driver, no device: not an error here
      return false;
    }
    return count > 0;
  }();
  return available;
}

}  // namespace

CudaBackend& the_cuda_backend() {
  // Never destroyed: tensors in static storage may release their blocks during exit.
  static CudaBackend* backend = [] {
    NL_CHECK(cuda_device_present(), "cuda", "no CUDA device is available (cudaGetDeviceCount found none)");
    return new CudaBackend();
  }();
  return *backend;
}

// ---- registration with core (core/backend.h): this library is found by core, not the reverse ----
namespace {

Backend& registered_backend() { return the_cuda_backend(); }
size_t registered_trim_cache() { return cuda_device_present() ? the_cuda_backend().trim_cache() : 0; }

[[maybe_unused]] const bool registered =
    (register_cuda_backend({registered_backend, cuda_device_present, registered_trim_cache}), true);

}  // namespace

}  // namespace normlab

// Named by normlab_cuda's link option (--undefined, core/cuda/CMakeLists.txt): the linker then takes
// this file out of the static library, and with it the registration above, although nothing calls it.
extern "C" void normlab_link_cuda_backend() {}

namespace normlab {

CudaBackend::CudaBackend() {
  NL_CUDA(cudaSetDevice(0));
  NL_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  const cublasStatus_t status = cublasCreate(&cublas_);
  if (status != CUBLAS_STATUS_SUCCESS) fail("cuda", "cublasCreate failed: {}", cublasGetStatusString(status));
  const cublasStatus_t set = cublasSetStream(cublas_, stream_);
  if (set != CUBLAS_STATUS_SUCCESS) fail("cuda", "cublasSetStream failed: {}", cublasGetStatusString(set));
}

// ---- caching allocator ----

namespace {

// Size classes: 512-byte multiples up to 2 KiB, then steps of a quarter of the power of two below
// the request (1024, 1280, 1536, 1792, 2048, 2560, ...): at most 25% slack.
size_t size_class(size_t bytes) {
  if (bytes <= 512) return 512;
  const size_t step = std::max<size_t>(std::bit_floor(bytes) / 4, 512);
  return (bytes + step - 1) / step * step;
}

}  // namespace

void* CudaBackend::allocate(size_t bytes) {
  const size_t size = size_class(bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_blocks_.find(size);
    if (it != free_blocks_.end() && !it->second.empty()) {
      void* ptr = it->second.back();
      it->second.pop_back();
      cached_bytes_ -= size;
      return ptr;
    }
  }
  void* ptr = nullptr;
  cudaError_t err = cudaMalloc(&ptr, size);
  if (err == cudaErrorMemoryAllocation) {  // give the cached blocks back and try once more
    cudaGetLastError();
    const size_t released = trim_cache();
    err = cudaMalloc(&ptr, size);
    if (err != cudaSuccess) {
      cudaGetLastError();
      throw OutOfMemory(fmt::format("[cuda] cudaMalloc of {} bytes failed: {} (after releasing {} cached bytes)",
                                    size, cudaGetErrorString(err), released));
    }
  }
  cuda_check(err, "cudaMalloc");
  return ptr;
}

// Caching the block needs a free-list slot, which may need host memory: when there is none, the
// block goes back to the driver instead (this runs in destructors, and must not throw).
void CudaBackend::deallocate(void* ptr, size_t bytes) noexcept {
  if (ptr == nullptr) return;
  const size_t size = size_class(bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      free_blocks_[size].push_back(ptr);
      cached_bytes_ += size;
      return;
    } catch (const std::bad_alloc&) {
    }
  }
  cudaFree(ptr);
  cudaGetLastError();
}

size_t CudaBackend::trim_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t released = 0;
  for (auto& [size, blocks] : free_blocks_) {
    for (void* ptr : blocks) {
      cudaFree(ptr);  // synchronizes the device first; errors here leave nothing to recover
      released += size;
    }
    blocks.clear();
  }
  free_blocks_.clear();
  cached_bytes_ = 0;
  cudaGetLastError();
  return released;
}

// ---- copies ----

void CudaBackend::copy_to_host(void* host_dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  NL_CUDA(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
  NL_CUDA(cudaStreamSynchronize(stream_));
}

void CudaBackend::copy_from_host(void* dst, const void* host_src, size_t bytes) {
  if (bytes == 0) return;
  NL_CUDA(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, stream_));
  // The host buffer may be freed as soon as we return: wait (pageable copies are staged anyway).
  NL_CUDA(cudaStreamSynchronize(stream_));
}

void CudaBackend::fill(Tensor& out, double value) {
  const int64_t n = out.numel();
  switch (out.dtype()) {
    case DType::F32:
      check_kernel(cuda::fill(dev<float>(out), n, static_cast<float>(value), stream_), "fill");
      break;
    case DType::F64:
      check_kernel(cuda::fill(dev<double>(out), n, value, stream_), "fill");
      break;
    case DType::I32:
      check_kernel(cuda::fill(dev<int32_t>(out), n, static_cast<int32_t>(value), stream_), "fill");
      break;
    case DType::BF16:  // value rounded once, to nearest even, on the host
      check_kernel(cuda::fill(dev<__nv_bfloat16>(out), n, __float2bfloat16_rn(static_cast<float>(value)), stream_),
                   "fill");
      break;
    case DType::F16:
      check_kernel(cuda::fill(dev<__half>(out), n, __float2half_rn(static_cast<float>(value)), stream_), "fill");
      break;
    default:
      fail("fill", "unsupported dtype {} on cuda", dtype_name(out.dtype()));
  }
}

namespace {

// Calls f(T{}) with T the CUDA storage type of `dtype` (float, double, int32_t, __nv_bfloat16,
// __half: the same bits as normlab's); throws "[copy] unsupported <role> dtype ..." otherwise.
template <typename F>
void storage_dispatch(DType dtype, const char* role, F&& f) {
  switch (dtype) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::I32: return f(int32_t{});
    case DType::BF16: return f(__nv_bfloat16{});
    case DType::F16: return f(__half{});
    default: fail("copy", "unsupported {} dtype {} on cuda", role, dtype_name(dtype));
  }
}

}  // namespace

void CudaBackend::copy_strided(const Tensor& src, Tensor& dst) {
  check_same_shape(src, dst, "copy", "src", "dst");
  if (src.dtype() == dst.dtype() && src.is_contiguous()) {
    if (src.nbytes() > 0)
      NL_CUDA(cudaMemcpyAsync(dst.raw_data(), src.raw_data(), src.nbytes(), cudaMemcpyDeviceToDevice, stream_));
    return;
  }
  NL_CHECK(src.dim() <= cuda::kMaxDims, "copy", "cuda copies support up to {} dimensions, got {}", cuda::kMaxDims,
           shape_str(src.shape()));
  cuda::Dims dims;
  dims.nd = src.dim();
  for (int d = 0; d < src.dim(); ++d) {
    dims.shape[d] = src.shape()[d];
    dims.stride[d] = src.strides()[d];
  }
  const int64_t n = dst.numel();
  storage_dispatch(src.dtype(), "source", [&](auto s) {
    using S = decltype(s);
    storage_dispatch(dst.dtype(), "destination", [&](auto d) {
      using D = decltype(d);
      check_kernel(cuda::copy_strided(static_cast<const S*>(src.raw_data()), dims, dev<D>(dst), n, stream_),
                   "copy_strided");
    });
  });
}

void CudaBackend::copy_columns(const Tensor& src, int64_t src_start, Tensor& dst, int64_t dst_start, int64_t length) {
  const int64_t src_cols = src.dim() == 0 ? 1 : src.shape().back();
  const int64_t dst_cols = dst.dim() == 0 ? 1 : dst.shape().back();
  const int64_t rows = src_cols == 0 ? 0 : src.numel() / src_cols;
  if (length == 0 || rows == 0) return;
  const size_t elem = dtype_size(src.dtype());
  const char* s = static_cast<const char*>(src.raw_data()) + src_start * elem;
  char* d = static_cast<char*>(dst.raw_data()) + dst_start * elem;
  NL_CUDA(cudaMemcpy2DAsync(d, dst_cols * elem, s, src_cols * elem, length * elem, rows, cudaMemcpyDeviceToDevice,
                            stream_));
}

}  // namespace normlab
