// The float32 kernel choice (core/cpu/f32_gemm.h): the environment, the kept file, the probe.
#include "core/cpu/f32_gemm.h"

#include <cblas.h>
#include <fmt/format.h>
#include <omp.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "core/cpu/blas_core.h"
#include "core/cpu/env_choice.h"
#include "core/cpu/f32_gemm_choice.h"
#include "core/error.h"

namespace normlab {

namespace {

std::atomic<F32GemmKernel>& requested_kernel() {
  // NORMLAB_F32_GEMM = auto | openblas | onednn (unset: auto).
  static std::atomic<F32GemmKernel> kernel{choice_from_environment(
      "NORMLAB_F32_GEMM", {F32GemmKernel::Auto, F32GemmKernel::OpenBlas, F32GemmKernel::OneDnn}, f32_gemm_kernel_name)};
  return kernel;
}

// The cache directory: $NORMLAB_CACHE_DIR, else $XDG_CACHE_HOME/normlab, else $HOME/.cache/normlab.
std::optional<std::filesystem::path> cache_directory() {
  if (const char* dir = std::getenv("NORMLAB_CACHE_DIR"); dir && *dir) return std::filesystem::path(dir);
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "normlab";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".cache" / "normlab";
  return std::nullopt;
}

// Auto's choice, made once per process: the kept file's, or measured now and kept (OpenBLAS, not
// kept, while the machine is busy).
const F32GemmChoice& auto_choice() {
  static const F32GemmChoice choice = [] {
    if (!onednn_f32_available()) {
      F32GemmChoice none;
      none.note = "oneDNN has no float32 kernel here";
      return none;
    }
    const std::optional<std::filesystem::path> dir = cache_directory();
    if (!dir) {
      F32GemmChoice measured = measure_f32_gemm_choice();
      measured.note = "not kept: no cache directory (set NORMLAB_CACHE_DIR or HOME)";
      return measured;
    }
    return kept_or_measured_choice(*dir / f32_choice_file_name(), measure_f32_gemm_choice, busy_machine_reason);
  }();
  return choice;
}

}  // namespace

std::string_view f32_gemm_kernel_name(F32GemmKernel kernel) {
  switch (kernel) {
    case F32GemmKernel::Auto: return "auto";
    case F32GemmKernel::OpenBlas: return "openblas";
    case F32GemmKernel::OneDnn: return "onednn";
  }
  return "?";
}

void set_f32_gemm_kernel(F32GemmKernel kernel) {
  NL_CHECK(kernel != F32GemmKernel::OneDnn || onednn_f32_available(), "gemm",
           "oneDNN was asked for float32 GEMMs but cannot run them here (built without oneDNN)");
  requested_kernel() = kernel;
}

F32GemmKernel f32_gemm_kernel(GemmClass cls) {
  const F32GemmKernel kernel = requested_kernel();
  if (kernel != F32GemmKernel::Auto) {
    NL_CHECK(kernel == F32GemmKernel::OpenBlas || onednn_f32_available(), "gemm",
             "NORMLAB_F32_GEMM=onednn, but oneDNN cannot run float32 GEMMs here (built without oneDNN)");
    return kernel;
  }
  const F32GemmChoice& choice = auto_choice();
  return choice.kernel[static_cast<int>(cls)];
}

std::string f32_gemm_description() {
  if (requested_kernel() != F32GemmKernel::Auto)
    return fmt::format("{} (NORMLAB_F32_GEMM)", f32_gemm_kernel_name(requested_kernel()));
  return describe_f32_choice(auto_choice());
}

void sgemm_piece_with(F32GemmKernel kernel, const SgemmPiece& p) {
  if (kernel == F32GemmKernel::OneDnn) return onednn_sgemm_one_thread(p);
  cblas_sgemm(CblasRowMajor, p.trans_a ? CblasTrans : CblasNoTrans, p.trans_b ? CblasTrans : CblasNoTrans, p.m,
              p.n, p.k, p.alpha, p.a, p.lda, p.b, p.ldb, p.beta, p.c, p.ldc);
}

void sgemm_piece(const SgemmPiece& p) { sgemm_piece_with(f32_gemm_kernel(gemm_class_of(p.m, p.n, p.k)), p); }

}  // namespace normlab
