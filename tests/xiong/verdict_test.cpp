// The Xiong suite's verdicts (xiong/verdict.h): decided on an interval, written as JSON.
#include <gtest/gtest.h>

#include <cmath>

#include "xiong/report.h"
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

// The report's sentence over its verdict table: true for an empty table, an all-reproduced one and
// one with failures (issue 53: "Every claim above is reproduced" stood under an empty table).
TEST(XiongReportText, TheNotReproducedSentenceSaysWhatTheTableHolds) {
  EXPECT_EQ(not_reproduced_sentence({}), "No claim is decided in this report.");
  Section empty{"E9", "why warmup", "", {}};
  EXPECT_EQ(not_reproduced_sentence({empty}), "No claim is decided in this report.");
  Section s{"E2", "profile", "", {with(0.5, 0.1, 0.9), with(0.5, 0.1, 0.9)}};
  s.verdicts[0].id = "E2a";
  s.verdicts[1].id = "E2b";
  s.verdicts[0].verdict = s.verdicts[1].verdict = "reproduced";
  EXPECT_EQ(not_reproduced_sentence({empty, s}), "Every claim above is reproduced.");
  s.verdicts[1].verdict = "contradicted";
  EXPECT_EQ(not_reproduced_sentence({s}), "Not reproduced: E2b (contradicted).");
  s.verdicts[0].verdict = "inconclusive";
  EXPECT_EQ(not_reproduced_sentence({s}), "Not reproduced: E2a (inconclusive), E2b (contradicted).");
}

}  // namespace
}  // namespace normlab::xiong
