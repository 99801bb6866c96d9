// train.flush_denormals: a run sets the switch its config asks for (on, and off again after a run
// that had it on), and the switch is part of what a run computes (its fingerprint).
#include <gtest/gtest.h>

#include "core/denormals.h"
#include "trainer_test_util.h"

namespace normlab {
namespace {

TEST(TrainFlushDenormals, ARunSetsTheSwitchItsConfigAsks) {
  const test::TinyRun t;
  set_flush_denormals(false);
  ASSERT_EQ(train(t.config({"train.name=on", "train.flush_denormals=true"}), test::quiet_options()).status,
            RunStatus::Completed);
  EXPECT_TRUE(flush_denormals_enabled());
  ASSERT_EQ(train(t.config({"train.name=off"}), test::quiet_options()).status, RunStatus::Completed);
  EXPECT_FALSE(flush_denormals_enabled()) << "a run without the switch does not inherit it from the last";
}

TEST(TrainFlushDenormals, OnChangesTheFingerprintOffReadsAsAbsent) {
  const test::TinyRun t;
  const std::string absent = config_fingerprint(t.config());
  EXPECT_EQ(config_fingerprint(t.config({"train.flush_denormals=false"})), absent);
  EXPECT_NE(config_fingerprint(t.config({"train.flush_denormals=true"})), absent);
}

}  // namespace
}  // namespace normlab
