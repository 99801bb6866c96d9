// BLIS's float32 GEMM (Debian libblis-openmp-dev), for bench/gemm_precision's comparison of the
// float32 GEMM libraries (issue 40). It is loaded at run time with dlopen(RTLD_LOCAL), never linked:
// BLIS exports the BLAS names too (sgemm_, cblas_sgemm), and linked beside OpenBLAS one library's
// symbols would silently answer for the other's. Only BLIS's own typed API is called (bli_sgemm).
#pragma once
#include <memory>
#include <string>

#include "core/backend.h"
#include "core/tensor.h"

namespace normlab {

class BlisSgemm {
 public:
  // Null when the library cannot be opened: NORMLAB_BLIS_LIBRARY, else Debian's OpenMP build.
  static std::unique_ptr<BlisSgemm> load();
  ~BlisSgemm();
  std::string kernel_set() const;  // the sub-configuration BLIS chose for this CPU ("zen", "haswell")
  void set_threads(int threads) const;
  // c = alpha op(a) op(b) + beta c, float32, row-major, as CpuBackend::gemm (GemmArgs).
  void gemm(const GemmArgs& g, const Tensor& a, const Tensor& b, Tensor& c) const;

 private:
  BlisSgemm() = default;
  void* handle_ = nullptr;
  void (*sgemm_)(int, int, int64_t, int64_t, int64_t, const float*, const float*, int64_t, int64_t, const float*,
                 int64_t, int64_t, const float*, float*, int64_t, int64_t) = nullptr;
  void (*set_threads_)(int64_t) = nullptr;
  int (*arch_id_)() = nullptr;
  const char* (*arch_name_)(int) = nullptr;
};

}  // namespace normlab
