// The Xiong suite's verdicts (xiong/verdict.h): decided on an interval, written as JSON.
#include <gtest/gtest.h>

#include <cmath>

#include "xiong/verdict.h"

namespace normlab::xiong {
namespace {

Verdict with(double est, double lo, double hi) {
  Verdict v;
  v.estimate = {est, lo, hi, 5, "t"};
  return v;
}

TEST(XiongVerdict, DirectionVerdictsFollowTheInterval) {
  Verdict v = with(0.5, 0.1, 0.9);
  v.decide_direction(0.0, Side::Above);
  EXPECT_EQ(v.verdict, "reproduced");
  v.decide_direction(0.0, Side::Below);
  EXPECT_EQ(v.verdict, "contradicted");
  v = with(0.5, -0.1, 0.9);
  v.decide_direction(0.0, Side::Above);
  EXPECT_EQ(v.verdict, "inconclusive");
  v = with(-0.5, -0.9, -0.2);
  v.decide_direction(0.0, Side::Below);
  EXPECT_EQ(v.verdict, "reproduced");
  v = with(1.5, 1.1, 1.9);  // a ratio against 1
  v.decide_direction(1.0, Side::Above);
  EXPECT_EQ(v.verdict, "reproduced");
  EXPECT_NE(v.criterion.find("above 1"), std::string::npos) << v.criterion;
  Verdict missing;
  missing.decide_direction(0.0, Side::Above);
  EXPECT_EQ(missing.verdict, "inconclusive");
}

TEST(XiongVerdict, EquivalenceVerdictsFollowTheInterval) {
  Verdict v = with(0.05, -0.1, 0.12);
  v.decide_equivalence(0.0, 0.15);
  EXPECT_EQ(v.verdict, "reproduced");
  v = with(0.1, -0.1, 0.2);  // straddles the margin
  v.decide_equivalence(0.0, 0.15);
  EXPECT_EQ(v.verdict, "inconclusive");
  v = with(0.4, 0.3, 0.5);
  v.decide_equivalence(0.0, 0.15);
  EXPECT_EQ(v.verdict, "contradicted");
}

TEST(XiongVerdict, VerdictJsonHasTheDocumentedFields) {
  Verdict v = with(0.5, 0.1, INFINITY);
  v.id = "E3a";
  v.steps = 2000;
  v.decide_direction(0.0, Side::Above);
  const nlohmann::json j = v.to_json();
  for (const char* key : {"id", "claim", "n_seeds", "steps", "estimate", "ci_low", "ci_high", "criterion", "verdict"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_TRUE(j["ci_high"].is_null());  // infinite bounds become null
  EXPECT_EQ(j["verdict"], "reproduced");
  EXPECT_EQ(j["steps"], 2000);
}

}  // namespace
}  // namespace normlab::xiong
