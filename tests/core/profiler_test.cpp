// The op-family profiler: off by default, counts only outermost scopes and charges them the time
// spent inside, and the ops carry scopes.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/ops.h"
#include "core/norm_ops.h"
#include "core/profiler.h"

namespace normlab {
namespace {

// Enables the profiler for one test and leaves it off and zeroed afterwards.
struct ProfilerOn {
  ProfilerOn() {
    profiler_reset();
    profiler_enable(true);
  }
  ~ProfilerOn() {
    profiler_enable(false);
    profiler_reset();
  }
};

TEST(Profiler, DisabledScopesRecordNothing) {
  profiler_reset();
  ASSERT_FALSE(profiler_enabled());
  { ProfileScope scope(OpFamily::Gemm); }
  ops::matmul(Tensor::ones({2, 3}), Tensor::ones({3, 4}));
  const ProfileTotals totals = profiler_totals();
  for (int f = 0; f < kOpFamilyCount; ++f) EXPECT_EQ(totals.calls[f], 0) << f;
  EXPECT_EQ(totals.total_seconds(), 0.0);
}

// The outermost scope is charged the whole time spent inside it, nested ones nothing: its seconds
// lie between the sleep inside it and the test's own clock around it.
TEST(Profiler, OnlyTheOutermostScopeCountsAndItsTimeIsTheWholeScope) {
  ProfilerOn on;
  const auto sleep = std::chrono::milliseconds(5);
  const auto before = std::chrono::steady_clock::now();
  {
    ProfileScope outer(OpFamily::Optimizer);
    ProfileScope inner(OpFamily::Elementwise);
    {
      ProfileScope innermost(OpFamily::Gemm);
      std::this_thread::sleep_for(sleep);
    }
  }
  const double around = std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
  const ProfileTotals totals = profiler_totals();
  EXPECT_EQ(totals.calls_of(OpFamily::Optimizer), 1);
  EXPECT_EQ(totals.calls_of(OpFamily::Elementwise), 0);
  EXPECT_EQ(totals.calls_of(OpFamily::Gemm), 0);
  const double charged = totals.seconds_of(OpFamily::Optimizer);
  EXPECT_GE(charged, std::chrono::duration<double>(sleep).count());
  EXPECT_LE(charged, around);
  EXPECT_EQ(totals.seconds_of(OpFamily::Gemm), 0.0);
  EXPECT_EQ(totals.seconds_of(OpFamily::Elementwise), 0.0);
  EXPECT_EQ(totals.total_seconds(), charged);
}

// Two scopes one after the other are two calls, and their times add up.
TEST(Profiler, SequentialScopesAddUp) {
  ProfilerOn on;
  const auto sleep = std::chrono::milliseconds(3);
  for (int i = 0; i < 2; ++i) {
    ProfileScope scope(OpFamily::Norm);
    std::this_thread::sleep_for(sleep);
  }
  const ProfileTotals totals = profiler_totals();
  EXPECT_EQ(totals.calls_of(OpFamily::Norm), 2);
  EXPECT_GE(totals.seconds_of(OpFamily::Norm), 2 * std::chrono::duration<double>(sleep).count());
}

TEST(Profiler, OpsAreChargedToTheirFamilies) {
  ProfilerOn on;
  const Tensor x = Tensor::ones({4, 8});
  ops::matmul(x, x, false, true);
  ops::softmax(x, {});
  ops::add(x, x);
  ops::layer_norm(x, Tensor(), Tensor(), 1e-5);
  const ProfileTotals totals = profiler_totals();
  EXPECT_EQ(totals.calls_of(OpFamily::Gemm), 1);
  EXPECT_EQ(totals.calls_of(OpFamily::Attention), 1);
  EXPECT_EQ(totals.calls_of(OpFamily::Elementwise), 1);
  EXPECT_EQ(totals.calls_of(OpFamily::Norm), 1);
  profiler_reset();
  EXPECT_EQ(profiler_totals().calls_of(OpFamily::Gemm), 0);
}

TEST(Profiler, FamilyNames) {
  EXPECT_STREQ(op_family_name(OpFamily::Gemm), "gemm");
  EXPECT_STREQ(op_family_name(OpFamily::Attention), "attention");
  EXPECT_STREQ(op_family_name(OpFamily::Norm), "norm");
  EXPECT_STREQ(op_family_name(OpFamily::Elementwise), "elementwise");
  EXPECT_STREQ(op_family_name(OpFamily::Optimizer), "optimizer");
  EXPECT_STREQ(op_family_name(OpFamily::Other), "other");
}

}  // namespace
}  // namespace normlab
