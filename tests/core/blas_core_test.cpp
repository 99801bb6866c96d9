#include "core/cpu/blas_core.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace normlab {
namespace {

// The test executables restart themselves like the CLI does (tests/test_main.cpp): by now the
// core OpenBLAS runs is one better_blas_core() has nothing to improve on.
TEST(BlasCore, NothingLeftToImproveAfterTheRestart) {
  EXPECT_FALSE(better_blas_core().has_value()) << "OpenBLAS core " << blas_core_name();
}

#if defined(__x86_64__)
TEST(BlasCore, AvxMachinesDoNotRunTheGenericKernels) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) GTEST_SKIP() << "no AVX2";
  if (const char* forced = std::getenv("OPENBLAS_CORETYPE"); forced && std::string(forced) == "Prescott")
    GTEST_SKIP() << "OPENBLAS_CORETYPE=Prescott set by hand";
  const std::string core = blas_core_name();
  EXPECT_NE(core, "Prescott");
  EXPECT_NE(core, "Core2");
  EXPECT_NE(core, "Nehalem");
}
#endif

}  // namespace
}  // namespace normlab
