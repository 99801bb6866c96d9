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

TEST(BlasCore, TheInstructionSetDecidesTheCore) {
  const BlasIsa avx512{true, true}, avx2{false, true}, old{false, false};
  // A generic core on an AVX-512 CPU (Sapphire Rapids with 0.3.21) and Zen 4 taken for a Zen.
  EXPECT_EQ(better_blas_core_for("Prescott", avx512), "SkylakeX");
  EXPECT_EQ(better_blas_core_for("Haswell", avx512), "SkylakeX");
  EXPECT_EQ(better_blas_core_for("Zen", avx512), "SkylakeX");
  // Already an AVX-512 core: left alone, whatever its spelling.
  EXPECT_FALSE(better_blas_core_for("SkylakeX", avx512).has_value());
  EXPECT_FALSE(better_blas_core_for("COOPERLAKE", avx512).has_value());
  EXPECT_FALSE(better_blas_core_for("SapphireRapids", avx512).has_value());
  // AVX2 without AVX-512: only a generic core is replaced, and by Haswell.
  EXPECT_EQ(better_blas_core_for("Prescott", avx2), "Haswell");
  EXPECT_EQ(better_blas_core_for("Nehalem", avx2), "Haswell");
  EXPECT_FALSE(better_blas_core_for("Zen", avx2).has_value());
  EXPECT_FALSE(better_blas_core_for("Haswell", avx2).has_value());
  // Neither: nothing the CPU could run better.
  EXPECT_FALSE(better_blas_core_for("Prescott", old).has_value());
}

// A core set by hand is kept, and the description says when the CPU could run a wider one.
TEST(BlasCore, TheDescriptionNamesAHandSetCoreNarrowerThanTheCpu) {
  const BlasIsa isa = cpu_blas_isa();
  if (!isa.avx2_fma) GTEST_SKIP() << "no AVX2: no core is better than Prescott here";
  const char* before = std::getenv("OPENBLAS_CORETYPE");
  const std::string saved = before ? before : "";
  setenv("OPENBLAS_CORETYPE", "Prescott", 1);
  const std::string text = blas_core_description();
  EXPECT_NE(text.find("OPENBLAS_CORETYPE=Prescott from the environment"), std::string::npos) << text;
  EXPECT_NE(text.find(isa.avx512 ? "SkylakeX's kernels" : "Haswell's kernels"), std::string::npos) << text;
  EXPECT_FALSE(better_blas_core().has_value()) << "a core set by hand must be kept";
  setenv("OPENBLAS_CORETYPE", isa.avx512 ? "SkylakeX" : "Haswell", 1);
  EXPECT_EQ(blas_core_description(), blas_core_name()) << "no note when the set core is the widest";
  if (before) setenv("OPENBLAS_CORETYPE", saved.c_str(), 1);
  else unsetenv("OPENBLAS_CORETYPE");
}

}  // namespace
}  // namespace normlab
