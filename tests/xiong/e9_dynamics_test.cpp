// E9's reading of dynamics.csv (xiong/e9_dynamics.h) on written files: the {top}/{bottom} and max:
// columns, a run cut short, the band over seeds in logs, and the first update where two arms part.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "train/run_dir.h"
#include "xiong/e9_dynamics.h"
#include "test_util.h"

namespace normlab::xiong {
namespace {

namespace fs = std::filesystem;

// A run directory whose dynamics.csv has `rows` updates of a 3-block model: grad.w2 of block N at
// update t is scale * (N + 1) * t, attention logits 1, 5, 2 (times t) in blocks 0..2.
std::string write_run(const fs::path& dir, const std::string& name, double scale, int rows) {
  const fs::path run = dir / name;
  fs::create_directories(run);
  StepCsvWriter csv(run / run_files::kDynamics, "dynamics");
  for (int t = 1; t <= rows; ++t)
    csv.write(t, {"output_change", "blocks.0.grad.w2", "blocks.1.grad.w2", "blocks.2.grad.w2", "blocks.0.attn.logit_max",
                  "blocks.1.attn.logit_max", "blocks.2.attn.logit_max"},
              {scale / t, scale * t, 2 * scale * t, 3 * scale * t, 1.0 * t, 5.0 * t, 2.0 * t});
  return run.string();
}

TEST(E9Dynamics, ColumnsResolveTopBottomAndMaxOverBlocks) {
  test::ScratchDir dir;
  const std::string run = write_run(dir.path(), "a", 1.0, 4);
  const auto top = dynamics_series(run, {"blocks.{top}.grad.w2", ""}, 3, 5);
  ASSERT_EQ(top.size(), 5u);
  EXPECT_DOUBLE_EQ(top[0], 3.0);
  EXPECT_DOUBLE_EQ(top[3], 12.0);
  EXPECT_TRUE(std::isnan(top[4])) << "update 5 was never logged";
  EXPECT_DOUBLE_EQ(dynamics_series(run, {"blocks.{bottom}.grad.w2", ""}, 3, 5)[1], 2.0);
  EXPECT_DOUBLE_EQ(dynamics_series(run, {"max:attn.logit_max", ""}, 3, 5)[2], 15.0);  // block 1's
  EXPECT_TRUE(std::isnan(dynamics_series(run, {"blocks.{top}.adam.sqrt_v_mean", ""}, 3, 5)[0]));  // SGD-like: absent
  EXPECT_TRUE(std::isnan(dynamics_series((dir.path() / "none").string(), {"output_change", ""}, 3, 2)[0]));
}

TEST(E9Dynamics, BandIsTheGeometricMeanWithItsInterval) {
  const std::vector<std::vector<double>> seeds = {{1.0, 10.0}, {4.0, 10.0}, {16.0, 10.0}};
  const ChartSeries s = band_series(seeds, {"q", "", true});
  ASSERT_EQ(s.points.size(), 2u);
  EXPECT_NEAR(s.points[0].second, 4.0, 1e-12);  // exp(mean(log 1, log 4, log 16))
  EXPECT_LT(s.band[0].first, 4.0);
  EXPECT_GT(s.band[0].second, 4.0);
  EXPECT_NEAR(s.band[0].first * s.band[0].second, 16.0, 1e-9);  // symmetric in logs
  EXPECT_NEAR(s.points[1].second, 10.0, 1e-12);
  const ChartSeries linear = band_series(seeds, {"q", "", false});
  EXPECT_NEAR(linear.points[0].second, 7.0, 1e-12);
}

TEST(E9Dynamics, FirstPartingIsTheFirstUpdateWithDisjointIntervals) {
  // Arms equal (up to seed noise) for updates 1-3, then b is 100x larger.
  std::vector<std::vector<double>> a, b;
  for (const double noise : {0.9, 1.0, 1.1}) {
    a.push_back({noise, noise, noise, noise, noise});
    b.push_back({1.05 * noise, 0.95 * noise, noise, 100 * noise, 100 * noise});
  }
  const DynamicsQuantity q{"q", "", true};
  EXPECT_EQ(first_parting(a, b, q), 4);
  EXPECT_EQ(first_parting(a, a, q), -1);
  b[0][1] = b[1][1] = b[2][1] = NAN;  // unlogged updates are skipped, not parted
  EXPECT_EQ(first_parting(a, b, q), 4);
}

// An explanation whose intervention fails is contradicted only by runs long enough for Post-LN
// without warmup at the lower rate to learn; E9's 1000 steps are not.
TEST(E9Dynamics, AFailedPredictionContradictsOnlyOverALongEnoughHorizon) {
  EXPECT_EQ(explanation_verdict(true, false, 1000), "supported");
  EXPECT_EQ(explanation_verdict(false, false, 1000), "mixed");
  EXPECT_EQ(explanation_verdict(false, true, 1000), "not sufficient at this strength and horizon");
  EXPECT_EQ(explanation_verdict(false, true, kE9ContradictionHorizon - 1), "not sufficient at this strength and horizon");
  EXPECT_EQ(explanation_verdict(false, true, kE9ContradictionHorizon), "contradicted");
}

}  // namespace
}  // namespace normlab::xiong
