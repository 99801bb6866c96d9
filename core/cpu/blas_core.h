#pragma once
// OpenBLAS picks its kernels from the CPU model at load time. A CPU newer than the library
// (Debian 12 ships OpenBLAS 0.3.21, which does not know Sapphire Rapids) falls back to the
// Prescott (SSE3) kernels: 3.6x slower for our GEMMs on such a machine (bench train,
// docs/performance.md). The instruction set, not the model name, says which kernels can run.
#include <optional>
#include <string>

namespace normlab {

// The kernel family OpenBLAS chose ("Prescott", "SkylakeX", ...), as the library names it.
std::string blas_core_name();

// The OPENBLAS_CORETYPE to use instead of a generic fallback core: "SkylakeX" where AVX-512
// (F, CD, BW, DQ, VL) is present, "Haswell" where AVX2 and FMA are; nothing when OpenBLAS already
// chose a core of its own for this CPU, when the user set OPENBLAS_CORETYPE, or when the CPU has neither.
std::optional<std::string> better_blas_core();

// Restarts this program with OPENBLAS_CORETYPE set when better_blas_core() names a core (the
// library reads the variable only when it loads). Returns when no restart is needed or exec fails.
void restart_with_better_blas_core(char** argv);

}  // namespace normlab
