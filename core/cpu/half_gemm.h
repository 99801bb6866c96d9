// GEMM on the 16-bit storage types (bfloat16, float16): A, B and C all in one half dtype, products
// accumulated in float32, C stored rounded to nearest even. Two implementations behind
// CpuBackend::gemm:
//   * oneDNN's matmul (core/cpu/onednn/), when normlab is built with oneDNN (NORMLAB_ONEDNN) and
//     oneDNN has a native kernel for the dtype on this CPU;
//   * the fallback: convert A, B (and C when beta != 0) to float32, OpenBLAS sgemm, round C back.
// Both compute C = alpha op(A) op(B) + beta C with C's half values as the beta term.
//
// Auto takes oneDNN only where it is expected to beat the fallback: CPUs with AMX tiles. With
// avx512_bf16 alone (no AMX), oneDNN 2.6's bfloat16 matmul measured 0.5-0.9x of float32 sgemm at
// the model's shapes, the fallback 0.7-1.0x (bench/gemm_precision, bench/README.md); oneDNN 2.6
// has no float16 matmul on the CPU at all. The environment variable NORMLAB_HALF_GEMM
// (auto, onednn, fallback) sets the initial path.
#pragma once
#include <string_view>

#include "core/backend.h"

namespace normlab {

enum class HalfGemmPath { Auto, OneDnn, Fallback };

// Which implementation half GEMMs use from now on (process-wide; NORMLAB_HALF_GEMM or Auto by
// default). For tests and bench/gemm_precision. OneDnn makes gemm throw where oneDNN cannot run
// the dtype.
void set_half_gemm_path(HalfGemmPath path);
// The implementation a GEMM of this half dtype takes now: OneDnn or Fallback.
HalfGemmPath half_gemm_path(DType dtype);
std::string_view half_gemm_path_name(HalfGemmPath path);

// C = alpha op(A) op(B) + beta C for bfloat16 or float16 A, B, C (GemmArgs as in core/backend.h).
void gemm_half(const GemmArgs& g, const Tensor& a, const Tensor& b, Tensor& c);

// ---- oneDNN (core/cpu/onednn/onednn_gemm.cpp, or the stub in core/cpu/no_onednn/) ----
// True when normlab was built with oneDNN and it has a native (non-reference) kernel for dtype here.
bool onednn_gemm_available(DType dtype);
// True when it is also expected to be faster than the fallback: oneDNN sees AMX on this CPU.
bool onednn_gemm_preferred(DType dtype);
void onednn_gemm(const GemmArgs& g, const Tensor& a, const Tensor& b, Tensor& c);

}  // namespace normlab
