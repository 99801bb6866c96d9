// The main of every test executable: GoogleTest's, after choosing OpenBLAS's kernels as the
// normlab binary does (core/cpu/blas_core.h), so that tests run the kernels users run.
#include <gtest/gtest.h>

#include "core/cpu/blas_core.h"

int main(int argc, char** argv) {
  normlab::restart_with_better_blas_core(argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
