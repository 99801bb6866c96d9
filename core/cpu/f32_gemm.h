// The float32 GEMM kernel behind CpuBackend::gemm: OpenBLAS's sgemm or oneDNN's f32 matmul.
//
// Which is faster depends on the CPU, and on one CPU on the shape (bench/README.md, "Figures
// behind the code's choices"). So the choice is measured, per shape class:
//   Large  m n k >= 2^24: the Linear layers' products (char_small's (768, 512, 128) and up);
//   Small  m n k >= 2^21: attention's per-head products at a few hundred positions;
//   Tiny   the rest: attention's products at short contexts (char_small's (64, 64, 32)).
// Auto times both kernels on each class's probe products (one thread, best of several tries,
// alternated, two rounds) and takes oneDNN where both rounds measure >= kF32AutoMargin times
// OpenBLAS's speed.
//
// The two kernels round differently, so a choice that flipped between processes would change a
// run's bits between runs of the same config (and between a run and its resumption). Auto's
// decision is therefore kept per machine: written once to a file in the cache directory
// ($NORMLAB_CACHE_DIR, else $XDG_CACHE_HOME/normlab, else ~/.cache/normlab), named by the CPU and
// the libraries, and read by every later process; two processes that measure at once both adopt
// the first file written. A busy machine (1-minute load >= a quarter of its hardware threads, or
// a probe that lost its core) measures nothing worth keeping: such a process uses OpenBLAS and
// keeps nothing, and the first process on an idle machine decides. So the runs of one machine can
// use OpenBLAS before that moment and the kept choice after it. NORMLAB_F32_GEMM = auto |
// openblas | onednn sets the kernel instead.
//
// oneDNN computes each product in pieces fixed by its shape, each on one thread
// (core/cpu/cpu_gemm.cpp), so its bits never depend on the thread count; OpenBLAS's pieces follow
// the thread count and keep the bits only under its AVX-512 kernels (tests/core/f32_gemm_test.cpp,
// tests/core/gemm_test.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace normlab {

enum class F32GemmKernel { Auto, OpenBlas, OneDnn };
enum class GemmClass { Tiny, Small, Large };
inline constexpr int64_t kSmallGemmMnk = int64_t{1} << 21;
inline constexpr int64_t kLargeGemmMnk = int64_t{1} << 24;
inline constexpr double kF32AutoMargin = 1.04;

inline GemmClass gemm_class_of(int64_t m, int64_t n, int64_t k) {
  const int64_t mnk = m * n * k;
  return mnk >= kLargeGemmMnk ? GemmClass::Large : mnk >= kSmallGemmMnk ? GemmClass::Small : GemmClass::Tiny;
}

// One row-major product C = alpha op(A) op(B) + beta C with leading dimensions, run on the
// calling thread only.
struct SgemmPiece {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  float alpha = 1.0f, beta = 0.0f;
  const float* a = nullptr;
  const float* b = nullptr;
  float* c = nullptr;
};

// The kernel float32 products of this class take now: OpenBlas or OneDnn.
F32GemmKernel f32_gemm_kernel(GemmClass cls);
// Sets the kernel for both classes from now on (Auto: back to the measured choice). For tests and
// bench/gemm_precision; OneDnn throws "[gemm] ..." where oneDNN cannot run float32 here.
void set_f32_gemm_kernel(F32GemmKernel kernel);
std::string_view f32_gemm_kernel_name(F32GemmKernel kernel);
// For `normlab --version` and `normlab bench train`: "large onednn (1.07x), small onednn (1.05x),
// tiny openblas (0.92x); measured 2026-12-05, kept in ~/.cache/normlab/f32-gemm-....json; oneDNN taken at >= 1.04x".
std::string f32_gemm_description();

// The piece through the kernel of its class, on the calling thread.
void sgemm_piece(const SgemmPiece& p);
void sgemm_piece_with(F32GemmKernel kernel, const SgemmPiece& p);

// ---- oneDNN (core/cpu/onednn/onednn_gemm.cpp, or the stub in core/cpu/no_onednn/) ----
// True when normlab was built with oneDNN and it has a non-reference float32 matmul here.
bool onednn_f32_available();
// The piece through oneDNN's f32 matmul, planned and run for one thread.
void onednn_sgemm_one_thread(const SgemmPiece& p);

}  // namespace normlab
