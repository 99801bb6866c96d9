// GEMM through cuBLAS (column-major) for row-major tensors, by the usual swap: a row-major (R, C)
// matrix is the column-major (C, R) matrix with the same bytes, so
//   C = op(A) op(B)  (row-major, M x N)   <=>   C^T = op(B)^T op(A)^T  (column-major, N x M)
// and cuBLAS is called with the operands swapped, each with its own transpose flag and the same
// leading dimensions as the CPU's row-major cblas call. Batches use the strided-batched call (a
// stride of 0 shares one matrix over the batch, as a linear layer's weight). Transposes are never
// materialised. Pure FP32/FP64 arithmetic (cuBLAS's default math mode: no TF32). bfloat16 and
// float16 operands go through cublasGemmEx / cublasGemmStridedBatchedEx with CUBLAS_COMPUTE_32F:
// float32 accumulation and float alpha/beta, C stored in its half dtype.
#include <climits>

#include "core/cuda/cuda_backend.h"
#include "core/cuda/kernels.h"

namespace normlab {

namespace {

void check_cublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) fail("cuda", "{} failed: {}", call, cublasGetStatusString(status));
}

cudaDataType_t cuda_half_type(DType dtype) { return dtype == DType::BF16 ? CUDA_R_16BF : CUDA_R_16F; }

}  // namespace

void CudaBackend::gemm(const GemmArgs& g, const Tensor& a, const Tensor& b, Tensor& c) {
  if (g.m == 0 || g.n == 0 || g.batch == 0) return;
  if (g.k == 0) {  // empty inner dimension: C = beta C
    if (g.beta == 0.0)
      fill(c, 0.0);
    else
      unary(UnaryOp::Scale, c, c, g.beta);
    return;
  }
  for (int64_t dim : {g.m, g.n, g.k})
    NL_CHECK(dim <= INT_MAX, "gemm", "dimension {} exceeds cuBLAS's int range (m {}, n {}, k {})", dim, g.m, g.n, g.k);
  const int m = static_cast<int>(g.n), n = static_cast<int>(g.m), k = static_cast<int>(g.k);  // swapped
  const cublasOperation_t op_first = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;                   // B comes first
  const cublasOperation_t op_second = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;                  // then A
  const int ld_first = static_cast<int>(g.trans_b ? g.k : g.n);
  const int ld_second = static_cast<int>(g.trans_a ? g.m : g.k);
  const int ldc = static_cast<int>(g.n);
  const int batch = static_cast<int>(g.batch);
  NL_CHECK(g.batch <= INT_MAX, "gemm", "batch {} exceeds cuBLAS's int range", g.batch);
  if (c.dtype() == DType::F32) {
    const float alpha = static_cast<float>(g.alpha), beta = static_cast<float>(g.beta);
    if (g.batch == 1)
      check_cublas(cublasSgemm(cublas_, op_first, op_second, m, n, k, &alpha, dev<float>(b), ld_first, dev<float>(a),
                               ld_second, &beta, dev<float>(c), ldc),
                   "cublasSgemm");
    else
      check_cublas(
          cublasSgemmStridedBatched(cublas_, op_first, op_second, m, n, k, &alpha, dev<float>(b), ld_first, g.stride_b,
                                    dev<float>(a), ld_second, g.stride_a, &beta, dev<float>(c), ldc, g.stride_c, batch),
          "cublasSgemmStridedBatched");
  } else if (c.dtype() == DType::F64) {
    const double alpha = g.alpha, beta = g.beta;
    if (g.batch == 1)
      check_cublas(cublasDgemm(cublas_, op_first, op_second, m, n, k, &alpha, dev<double>(b), ld_first, dev<double>(a),
                               ld_second, &beta, dev<double>(c), ldc),
                   "cublasDgemm");
    else
      check_cublas(cublasDgemmStridedBatched(cublas_, op_first, op_second, m, n, k, &alpha, dev<double>(b), ld_first,
                                             g.stride_b, dev<double>(a), ld_second, g.stride_a, &beta, dev<double>(c),
                                             ldc, g.stride_c, batch),
                   "cublasDgemmStridedBatched");
  } else if (is_half(c.dtype())) {
    NL_CHECK(a.dtype() == c.dtype() && b.dtype() == c.dtype(), "gemm",
             "operands must share one dtype, got a {}, b {}, c {}", dtype_name(a.dtype()), dtype_name(b.dtype()),
             dtype_name(c.dtype()));
    const float alpha = static_cast<float>(g.alpha), beta = static_cast<float>(g.beta);
    const cudaDataType_t type = cuda_half_type(c.dtype());
    if (g.batch == 1)
      check_cublas(cublasGemmEx(cublas_, op_first, op_second, m, n, k, &alpha, b.raw_data(), type, ld_first,
                                a.raw_data(), type, ld_second, &beta, c.raw_data(), type, ldc, CUBLAS_COMPUTE_32F,
                                CUBLAS_GEMM_DEFAULT),
                   "cublasGemmEx");
    else
      check_cublas(cublasGemmStridedBatchedEx(cublas_, op_first, op_second, m, n, k, &alpha, b.raw_data(), type,
                                              ld_first, g.stride_b, a.raw_data(), type, ld_second, g.stride_a, &beta,
                                              c.raw_data(), type, ldc, g.stride_c, batch, CUBLAS_COMPUTE_32F,
                                              CUBLAS_GEMM_DEFAULT),
                   "cublasGemmStridedBatchedEx");
  } else {
    fail("gemm", "expected float32, float64, bfloat16 or float16, got {}", dtype_name(c.dtype()));
  }
}

}  // namespace normlab
