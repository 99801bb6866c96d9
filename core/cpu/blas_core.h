#pragma once
// OpenBLAS picks its kernels from the CPU model at load time. A CPU newer than the library
// (Debian 12 ships OpenBLAS 0.3.21) gets kernels below what its instruction set can run:
//   * Intel Sapphire Rapids is unknown to it: the Prescott (SSE3) kernels;
//   * a core without AVX-512 on a CPU that has it: Haswell's (AVX2) kernels.
// Both are several times or tens of percent slower than the SkylakeX kernels the CPU can run
// (bench/README.md, "Figures behind the code's choices").
// The instruction set, not the model name, says which kernels can run. An OPENBLAS_CORETYPE the
// user set is kept; blas_core_description() says when it is narrower than the CPU allows.
#include <optional>
#include <string>

namespace normlab {

// The kernel family OpenBLAS chose ("Prescott", "SkylakeX", ...), as the library names it.
std::string blas_core_name();

// blas_core_name(), and when OPENBLAS_CORETYPE holds a core narrower than the CPU allows, a note
// saying so: "Haswell (OPENBLAS_CORETYPE=Haswell from the environment; this CPU can run
// SkylakeX's kernels)". For `normlab --version` and `normlab bench`.
std::string blas_core_description();

// What the CPU can run, as far as the choice of OpenBLAS core goes.
struct BlasIsa {
  bool avx512 = false;    // AVX-512 F, CD, BW, DQ and VL: SkylakeX's kernels
  bool avx2_fma = false;  // AVX2 and FMA: Haswell's kernels
};
BlasIsa cpu_blas_isa();

// Whether OpenBLAS runs AVX-512 kernels (SkylakeX, Cooperlake, SapphireRapids) on a CPU that has
// AVX-512. Only there is a float32 product, split over threads by the CPU backend or by OpenBLAS,
// bitwise equal at every thread count (core/cpu/cpu_gemm.cpp; under Haswell's kernels it is not).
bool blas_runs_avx512_kernels();

// The OPENBLAS_CORETYPE to use instead of `chosen`: "SkylakeX" where the CPU has AVX-512 and
// `chosen` is not an AVX-512 core, "Haswell" where it has AVX2 and FMA and `chosen` is a generic
// (pre-AVX2) core; nothing otherwise.
std::optional<std::string> better_blas_core_for(const std::string& chosen, BlasIsa isa);

// better_blas_core_for(the running core, this CPU), or nothing when the user set OPENBLAS_CORETYPE.
std::optional<std::string> better_blas_core();

// Restarts this program with OPENBLAS_CORETYPE set when better_blas_core() names a core (the
// library reads the variable only when it loads). Returns when no restart is needed or exec fails.
void restart_with_better_blas_core(char** argv);

}  // namespace normlab
