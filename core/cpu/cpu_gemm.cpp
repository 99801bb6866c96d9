// GEMM: float64 through OpenBLAS, float32 through the kernel core/cpu/f32_gemm.h chooses (OpenBLAS
// or oneDNN). Transposes are folded into the call (no transposed copies); a batch is a
// loop of cblas calls over strided matrices (a zero stride shares one matrix across the batch).
// bfloat16/float16 operands go to gemm_half (core/cpu/half_gemm.h): oneDNN or a float32 fallback.
#include <cblas.h>

#include <algorithm>

#include "core/cpu/cpu_backend.h"
#include "core/cpu/f32_gemm.h"
#include "core/cpu/half_gemm.h"

namespace normlab {

namespace {

// How a float32 GEMM call is spread over the OpenMP threads. The kernel (core/cpu/f32_gemm.h) is
// OpenBLAS's sgemm or oneDNN's f32 matmul, chosen per product class.
//
// OpenBLAS runs a call made inside an active parallel region on one thread, and threads a call
// made outside one itself when m n k > 2^18. Its own threading, and our pieces when they fall to
// its small-matrix kernels (m n k below about 10^6, other rounding), change bits with the thread
// count (bench/README.md: under AVX-512 kernels (128, 20, 400) and (128, 40, 390) do at 2 threads;
// 210 of 3888 shapes did when a piece fell below the threshold). So every product up to 2^26 is
// computed by the same single-threaded kernel over the same sums at every thread count: whole, or
// in pieces of C's rows or columns. Larger ones are left to OpenBLAS's threading, which shares
// packed panels between the threads.
//
// oneDNN does not sum a piece as it sums the same rows or columns of the whole (transposed A, and
// column pieces, differ in the last bits: tests/core/gemm_test.cpp), so its products are cut into
// pieces whose number depends on the shape only, never on the thread count (onednn_pieces).
enum class Spread {
  kWhole,      // one call per matrix outside a parallel region (OpenBLAS may thread it)
  kBatch,      // whole matrices of a batch over threads
  kRows,       // rows of C over threads (op(A)'s rows: rows of A, or its columns when transposed)
  kColumns,    // columns of C over threads (op(B)'s columns: columns of B, or its rows when transposed)
  kOneThread,  // too small to split: one thread, as at a thread count of 1
};

constexpr int64_t kOpenBlasThreadsAboveMnk = int64_t{1} << 18;
constexpr int64_t kSplitMaxMnk = int64_t{1} << 26;
constexpr int64_t kSplitMinPieceMnk = int64_t{1} << 21;  // twice the small-matrix threshold

// A batch goes whole matrices to threads when OpenBLAS would not thread them, or when there are at
// least as many as threads (mid's attention at long contexts). A single matrix is split along the
// longer side of C, where the halves keep more of each row's work together (both measured in
// bench/README.md, "Figures behind the code's choices").
Spread choose_spread(const GemmArgs& g, int threads) {
  const int64_t mnk = g.m * g.n * g.k;
  if (threads == 1 || mnk > kSplitMaxMnk) return Spread::kWhole;
  if (g.batch > 1 && (mnk <= kOpenBlasThreadsAboveMnk || g.batch >= threads)) return Spread::kBatch;
  if (mnk <= kOpenBlasThreadsAboveMnk) return Spread::kWhole;
  const int64_t side = std::max(g.m, g.n);
  if (side < 64 * threads || side / threads * (mnk / side) < kSplitMinPieceMnk) return Spread::kOneThread;
  return g.m >= g.n ? Spread::kRows : Spread::kColumns;
}

// Rows [s0, s1) of C (or columns, when !rows) as a product of their own.
SgemmPiece slice(const SgemmPiece& whole, bool rows, int64_t s0, int64_t s1) {
  SgemmPiece piece = whole;
  if (rows) {
    piece.m = s1 - s0;
    piece.a = whole.a + (whole.trans_a ? s0 : s0 * whole.lda);
    piece.c = whole.c + s0 * whole.ldc;
  } else {
    piece.n = s1 - s0;
    piece.b = whole.b + (whole.trans_b ? s0 * whole.ldb : s0);
    piece.c = whole.c + s0;
  }
  return piece;
}

// C[i] = alpha op(A[i]) op(B[i]) + beta C[i] (`whole` holds matrix i), spread as `spread` says (not kBatch).
void openblas_matrix(const SgemmPiece& whole, Spread spread, int threads) {
  constexpr F32GemmKernel kernel = F32GemmKernel::OpenBlas;
  // No OpenMP construct is entered for kWhole: inside a one-thread team OpenBLAS would open a
  // nested team (new threads) per call.
  if (spread == Spread::kWhole) return sgemm_piece_with(kernel, whole);
  if (spread == Spread::kOneThread) {
#pragma omp parallel
#pragma omp single
    sgemm_piece_with(kernel, whole);
    return;
  }
  const bool rows = spread == Spread::kRows;
  const int64_t side = rows ? whole.m : whole.n;
#pragma omp parallel for schedule(static)
  for (int t = 0; t < threads; ++t) {
    const int64_t s0 = side * t / threads, s1 = side * (t + 1) / threads;
    sgemm_piece_with(kernel, slice(whole, rows, s0, s1));
  }
}

// oneDNN's pieces of one matrix: 1, 2, 4 or 8 along the longer side of C, as many as keep each
// piece at m n k >= 2^24 and its side >= 64 (a shape-only rule: the same at every thread count).
constexpr int64_t kOneDnnMinPieceMnk = int64_t{1} << 21;
int64_t onednn_pieces(const GemmArgs& g) {
  const int64_t mnk = g.m * g.n * g.k, side = std::max(g.m, g.n);
  int64_t pieces = 1;
  while (pieces < 8 && mnk / (2 * pieces) >= kOneDnnMinPieceMnk && side / (2 * pieces) >= 64) pieces *= 2;
  return pieces;
}

// Every (matrix, piece) of the batch is one task on one thread; threads take tasks in order.
void onednn_batch(const GemmArgs& g, const SgemmPiece& first) {
  const int64_t pieces = onednn_pieces(g), tasks = g.batch * pieces;
  const bool rows = g.m >= g.n;
  const int64_t side = rows ? g.m : g.n;
#pragma omp parallel for schedule(static) if (tasks > 1 && num_threads() > 1)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t i = t / pieces, j = t % pieces;
    SgemmPiece matrix = first;
    matrix.a += i * g.stride_a, matrix.b += i * g.stride_b, matrix.c += i * g.stride_c;
    sgemm_piece_with(F32GemmKernel::OneDnn, slice(matrix, rows, side * j / pieces, side * (j + 1) / pieces));
  }
}

void sgemm_batch(const GemmArgs& g, const SgemmPiece& first) {
  if (f32_gemm_kernel(gemm_class_of(g.m, g.n, g.k)) == F32GemmKernel::OneDnn) return onednn_batch(g, first);
  const int threads = num_threads();
  const Spread spread = choose_spread(g, threads);
  const auto matrix = [&](int64_t i) {
    SgemmPiece p = first;
    p.a += i * g.stride_a, p.b += i * g.stride_b, p.c += i * g.stride_c;
    return p;
  };
  if (spread == Spread::kBatch) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < g.batch; ++i) openblas_matrix(matrix(i), Spread::kWhole, 1);
    return;
  }
  for (int64_t i = 0; i < g.batch; ++i) openblas_matrix(matrix(i), spread, threads);
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
    const SgemmPiece first{g.trans_a, g.trans_b, g.m, g.n, g.k, lda, ldb, ldc, static_cast<float>(g.alpha),
                           static_cast<float>(g.beta), a.data<float>(), b.data<float>(), c.data<float>()};
    sgemm_batch(g, first);
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
