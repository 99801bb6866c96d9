// GEMM through OpenBLAS: transposes are folded into the call (no transposed copies); a batch is a
// loop of cblas calls over strided matrices (a zero stride shares one matrix across the batch).
// bfloat16/float16 operands go to gemm_half (core/cpu/half_gemm.h): oneDNN or a float32 fallback.
#include <cblas.h>

#include "core/cpu/cpu_backend.h"
#include "core/cpu/half_gemm.h"

namespace normlab {

void CpuBackend::gemm(const GemmArgs& g, const Tensor& a, const Tensor& b, Tensor& c) {
  const CBLAS_TRANSPOSE ta = g.trans_a ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = g.trans_b ? CblasTrans : CblasNoTrans;
  const int64_t lda = g.trans_a ? g.m : g.k;  // stored A is (M,K) or, transposed, (K,M)
  const int64_t ldb = g.trans_b ? g.k : g.n;
  const int64_t ldc = g.n;
  if (is_half(c.dtype())) return gemm_half(g, a, b, c);
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) {  // empty inner dimension: C = beta * C
    dispatch_floating(c.dtype(), "gemm", [&](auto t) {
      using T = decltype(t);
      T* cp = c.data<T>();
      for (int64_t i = 0; i < g.batch * g.m * g.n; ++i) cp[i] = g.beta == 0.0 ? T(0) : T(g.beta) * cp[i];
    });
    return;
  }
  if (c.dtype() == DType::F32) {
    const float* ap = a.data<float>();
    const float* bp = b.data<float>();
    float* cp = c.data<float>();
    for (int64_t i = 0; i < g.batch; ++i)
      cblas_sgemm(CblasRowMajor, ta, tb, g.m, g.n, g.k, static_cast<float>(g.alpha),
                  ap + i * g.stride_a, lda, bp + i * g.stride_b, ldb, static_cast<float>(g.beta),
                  cp + i * g.stride_c, ldc);
  } else if (c.dtype() == DType::F64) {
    const double* ap = a.data<double>();
    const double* bp = b.data<double>();
    double* cp = c.data<double>();
    for (int64_t i = 0; i < g.batch; ++i)
      cblas_dgemm(CblasRowMajor, ta, tb, g.m, g.n, g.k, g.alpha, ap + i * g.stride_a, lda,
                  bp + i * g.stride_b, ldb, g.beta, cp + i * g.stride_c, ldc);
  } else {
    fail("gemm", "expected float32, float64, bfloat16 or float16, got {}", dtype_name(c.dtype()));
  }
}

}  // namespace normlab
