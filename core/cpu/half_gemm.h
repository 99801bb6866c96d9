// GEMM on the 16-bit storage types (bfloat16, float16): A, B and C all in one half dtype, products
// accumulated in float32, C stored rounded to nearest even. Two implementations behind
// CpuBackend::gemm:
//   * oneDNN's matmul (core/cpu/onednn/), when normlab is built with oneDNN (NORMLAB_ONEDNN) and
//     oneDNN has a native kernel for the dtype on this CPU;
//   * the fallback: convert A, B (and C when beta != 0) to float32, OpenBLAS sgemm, round C back.
// Both compute C = alpha op(A) op(B) + beta C with C's half values as the beta term.
//
// Auto takes the faster one, decided once per dtype and process: oneDNN on CPUs with AMX tiles;
// elsewhere, where oneDNN has a native kernel, both are timed on one Linear layer's forward and
// backward GEMMs at a transformer's size (1024 rows, 512 in, 512 out; best of 5 each) and oneDNN
// is taken only at >= kAutoMargin times the fallback's speed, so that timing noise cannot flip a
// close call. The probe costs about 0.1 s, once per dtype and process. The CPUs measured so far
// are far from a close call, some on each side (bench/gemm_precision; the figures in
// bench/README.md). oneDNN 2.6 has no float16 matmul on the CPU.
// The environment variable NORMLAB_HALF_GEMM (auto, onednn, fallback) sets the initial path.
#pragma once
#include <string>
#include <string_view>

#include "core/backend.h"

namespace normlab {

class Generator;  // core/random.h

enum class HalfGemmPath { Auto, OneDnn, Fallback };

// Which implementation half GEMMs use from now on (process-wide; NORMLAB_HALF_GEMM or Auto by
// default). For tests and bench/gemm_precision. OneDnn makes gemm throw where oneDNN cannot run
// the dtype.
void set_half_gemm_path(HalfGemmPath path);
// The implementation a GEMM of this half dtype takes now: OneDnn or Fallback.
HalfGemmPath half_gemm_path(DType dtype);
std::string_view half_gemm_path_name(HalfGemmPath path);
// The path and why, for `normlab --version` and `normlab bench train`: "onednn (oneDNN measured
// 2.30x the float32 fallback on a 512x512 Linear over 1024 rows, forward and backward; taken at
// >= 1.25x)".
std::string half_gemm_description(DType dtype);
inline constexpr double kAutoMargin = 1.25;

// One of the three GEMMs of a Linear layer (K in, N out) over M rows, with random normal operands
// of dtype: Forward Y = X W^T (M,K)(N,K)^T, InputGrad dX = dY W (M,N)(N,K), WeightGrad dW = dY^T X
// (M,N)^T (M,K). Auto's probe and bench/gemm_precision time these.
enum class LinearGemm { Forward, InputGrad, WeightGrad };
struct GemmOperands {
  GemmArgs args;
  Tensor a, b, c;
};
GemmOperands random_linear_gemm(LinearGemm which, int64_t rows, int64_t in, int64_t out, DType dtype,
                                Generator& gen);

// C = alpha op(A) op(B) + beta C for bfloat16 or float16 A, B, C (GemmArgs as in core/backend.h).
void gemm_half(const GemmArgs& g, const Tensor& a, const Tensor& b, Tensor& c);

// ---- oneDNN (core/cpu/onednn/onednn_gemm.cpp, or the stub in core/cpu/no_onednn/) ----
// True when normlab was built with oneDNN and it has a native (non-reference) kernel for dtype here.
bool onednn_gemm_available(DType dtype);
// True when it is also expected to be faster than the fallback: oneDNN sees AMX on this CPU.
bool onednn_gemm_preferred(DType dtype);
// For bfloat16 and float16; also float32, for bench/gemm_precision (the float32 kernel the
// backend runs is core/cpu/f32_gemm.h's choice).
void onednn_gemm(const GemmArgs& g, const Tensor& a, const Tensor& b, Tensor& c);

}  // namespace normlab
