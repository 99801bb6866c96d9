// `normlab --version`. What the build knew (version, commit, build type, BLAS, CUDA toolkit) comes
// from cli/CMakeLists.txt at configure time; the BLAS kernels and the GPU are looked up now.
#include <fmt/core.h>

#include "cli/commands.h"
#include "core/backend.h"
#include "core/build_info.h"
#include "core/cpu/blas_core.h"
#include "core/cpu/f32_gemm.h"
#include "core/cpu/half_gemm.h"

namespace normlab::cli {

namespace {

std::string cuda_line() {
  if (std::string(NORMLAB_CUDA_TOOLKIT).empty()) return "not built (configure with -DNORMLAB_CUDA=ON and nvcc)";
  const char* linked = cuda_backend_linked() ? "" : ", backend not linked";
  return fmt::format("built (CUDA {}{}), device {}", NORMLAB_CUDA_TOOLKIT, linked,
                     cuda_available() ? "found" : "not found");
}

}  // namespace

std::string version_text() {
  return fmt::format("normlab {}\n"
                     "commit      {}\n"
                     "build type  {}\n"
                     "BLAS        {}, kernels {}\n"
                     "fp32 GEMM   {}\n"
                     "bf16 GEMM   {}\n"
                     "fp16 GEMM   {}\n"
                     "CUDA        {}",
                     NORMLAB_VERSION, build_commit(), NORMLAB_BUILD_TYPE, NORMLAB_BLAS, blas_core_description(),
                     f32_gemm_description(), half_gemm_description(DType::BF16), half_gemm_description(DType::F16), cuda_line());
}

}  // namespace normlab::cli
