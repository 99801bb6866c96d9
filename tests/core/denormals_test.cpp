// train.flush_denormals (core/denormals.h): with it on, every thread of the OpenMP pool and a GEMM
// read and write subnormal floats as 0; off again, they are kept.
#include <gtest/gtest.h>
#include <omp.h>

#include <cfloat>
#include <vector>

#include "core/backend.h"
#include "core/denormals.h"
#include "core/ops.h"
#include "core/tensor.h"

namespace normlab {
namespace {

// Per thread of a 2-thread team: whether a subnormal result (FLT_MIN / 4) came out as 0 (FTZ).
std::vector<bool> flushed_per_thread() {
  std::vector<bool> flushed(2, false);
  volatile float smallest_normal = FLT_MIN;
#pragma omp parallel num_threads(2)
  {
    const volatile float quarter = smallest_normal * 0.25f;  // subnormal, or 0 under FTZ
    flushed[omp_get_thread_num()] = quarter == 0.0f;
  }
  return flushed;
}

class FlushDenormals : public ::testing::Test {
 protected:
  void SetUp() override {
    omp_set_num_threads(2);
    set_flush_denormals(false);
  }
  void TearDown() override { set_flush_denormals(false); }
};

TEST_F(FlushDenormals, EveryPoolThreadFlushesWhileOnAndKeepsWhenOff) {
  EXPECT_EQ(flushed_per_thread(), std::vector<bool>({false, false}));
  set_flush_denormals(true);
  EXPECT_TRUE(flush_denormals_enabled());
  EXPECT_EQ(flushed_per_thread(), std::vector<bool>({true, true}));
  set_flush_denormals(false);
  EXPECT_FALSE(flush_denormals_enabled());
  EXPECT_EQ(flushed_per_thread(), std::vector<bool>({false, false}));
}

// A (64, 64) x (64, 64) product whose A holds subnormals (2^-128) and B 1024: each product, 2^-118,
// is a normal float, so only DAZ (operands read as 0) makes C = 0; otherwise C = 64 * 2^-118.
TEST_F(FlushDenormals, AGemmReadsSubnormalOperandsAsZero) {
  const float subnormal = FLT_MIN / 4;  // 2^-128
  const Tensor a = Tensor::full({64, 64}, subnormal), b = Tensor::full({64, 64}, 1024.0f);
  EXPECT_EQ(ops::matmul(a, b).to_vector()[0], 64.0 * subnormal * 1024.0);
  set_flush_denormals(true);
  for (const double c : ops::matmul(a, b).to_vector()) ASSERT_EQ(c, 0.0);
}

}  // namespace
}  // namespace normlab
