// GEMM on the 16-bit storage types (bfloat16, float16): A, B and C all in one half dtype, products
// accumulated in float32, C stored rounded to nearest even. Two implementations behind
// CpuBackend::gemm:
//   * oneDNN's matmul (core/cpu/onednn/), when normlab is built with oneDNN (NORMLAB_ONEDNN) and
//     oneDNN has a native kernel for the dtype on this CPU (avx512_bf16 / avx512_fp16);
//   * the fallback: convert A, B (and C when beta != 0) to float32, OpenBLAS sgemm, round C back.
// Both compute C = alpha op(A) op(B) + beta C with C's half values as the beta term.
#pragma once
#include <string_view>

#include "core/backend.h"

namespace normlab {

enum class HalfGemmPath { Auto, OneDnn, Fallback };

// Which implementation half GEMMs use from now on (process-wide; Auto by default). For tests and
// bench/gemm_precision. OneDnn makes gemm throw where oneDNN cannot run the dtype.
void set_half_gemm_path(HalfGemmPath path);
// The implementation a GEMM of this half dtype takes now: OneDnn or Fallback.
HalfGemmPath half_gemm_path(DType dtype);
std::string_view half_gemm_path_name(HalfGemmPath path);

// C = alpha op(A) op(B) + beta C for bfloat16 or float16 A, B, C (GemmArgs as in core/backend.h).
void gemm_half(const GemmArgs& g, const Tensor& a, const Tensor& b, Tensor& c);

// ---- oneDNN (core/cpu/onednn/onednn_gemm.cpp, or the stub in core/cpu/no_onednn/) ----
// True when normlab was built with oneDNN and it has a native (non-reference) kernel for dtype here.
bool onednn_gemm_available(DType dtype);
void onednn_gemm(const GemmArgs& g, const Tensor& a, const Tensor& b, Tensor& c);

}  // namespace normlab
