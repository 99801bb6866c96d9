// GEMM through OpenBLAS: transposes are folded into the call (no transposed copies); a batch is a
// loop of cblas calls over strided matrices (a zero stride shares one matrix across the batch).
// bfloat16/float16 operands go to gemm_half (core/cpu/half_gemm.h): oneDNN or a float32 fallback.
#include <cblas.h>

#include "core/cpu/cpu_backend.h"
#include "core/cpu/half_gemm.h"

namespace normlab {

namespace {

// A float32 batch of small matrices (attention's (B*H) q k^T and p v: each below OpenBLAS's own
// threading threshold, m n k <= 2^18, so OpenBLAS would run them one after another on one thread)
// is split over OpenMP threads, one whole matrix per call; OpenBLAS runs a call made inside an
// active parallel region on one thread. Each matrix is computed by the same single-threaded kernel
// at every thread count, so results stay bitwise identical. No OpenMP construct is entered when
// not splitting: inside a one-thread team OpenBLAS would open a nested team (new threads) per call.
constexpr int64_t kSplitBatchMnk = int64_t{1} << 18;
constexpr int64_t kSplitRowsMnk = int64_t{1} << 26;

void sgemm_batch(const GemmArgs& g, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t lda, int64_t ldb,
                 int64_t ldc, const float* ap, const float* bp, float* cp) {
  const auto one = [&](int64_t i) {
    cblas_sgemm(CblasRowMajor, ta, tb, g.m, g.n, g.k, static_cast<float>(g.alpha), ap + i * g.stride_a, lda,
                bp + i * g.stride_b, ldb, static_cast<float>(g.beta), cp + i * g.stride_c, ldc);
  };
  const int threads = num_threads();
  if (g.batch > 1 && threads > 1 && g.m * g.n * g.k <= kSplitBatchMnk) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < g.batch; ++i) one(i);
  } else if (g.batch == 1 && threads > 1 && g.m >= 64 * threads && g.m * g.n * g.k <= kSplitRowsMnk) {
    // Rows of C over threads (op(A)'s rows r0..r1: rows of A, or its columns when transposed)
#pragma omp parallel for schedule(static)
    for (int t = 0; t < threads; ++t) {
      const int64_t r0 = g.m * t / threads, r1 = g.m * (t + 1) / threads;
      cblas_sgemm(CblasRowMajor, ta, tb, r1 - r0, g.n, g.k, static_cast<float>(g.alpha),
                  ap + (g.trans_a ? r0 : r0 * lda), lda, bp, ldb, static_cast<float>(g.beta), cp + r0 * ldc, ldc);
    }
  } else {
    for (int64_t i = 0; i < g.batch; ++i) one(i);
  }
}

}  // namespace

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
    sgemm_batch(g, ta, tb, lda, ldb, ldc, a.data<float>(), b.data<float>(), c.data<float>());
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
