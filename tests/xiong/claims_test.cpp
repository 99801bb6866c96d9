// `--only` parsed into a ClaimSelection: which experiments run, which verdicts a token keeps, which runs an E3 claim trains, and how a
// claim's fresh verdict replaces its row among an earlier run's verdicts.
#include <gtest/gtest.h>

#include <set>

#include "core/error.h"
#include "xiong/claims.h"
#include "xiong/e3_common.h"
#include "xiong/experiments.h"

namespace normlab::xiong {
namespace {

const std::vector<std::string> kKnown = {"E1", "E2", "E3", "E4"};

TEST(XiongClaims, TokensNameAnExperimentOrAClaim) {
  EXPECT_THROW(ClaimSelection({"E9a"}, kKnown), Error);
  EXPECT_THROW(ClaimSelection({"X3"}, kKnown), Error);
  EXPECT_NO_THROW(ClaimSelection({"E3a@1e-3", "E1"}, kKnown));
  EXPECT_TRUE(claim_matches("E3a", "E3a@5e-4"));
  EXPECT_TRUE(claim_matches("E3a", "E3a.text@5e-4"));
  EXPECT_TRUE(claim_matches("E3a@5e-4", "E3a@5e-4"));
  EXPECT_FALSE(claim_matches("E3a@5e-4", "E3a@5e-4x"));
  EXPECT_FALSE(claim_matches("E3a", "E3ab"));
  EXPECT_FALSE(claim_matches("E3a", "E3b"));
}

TEST(XiongClaims, ASelectionRunsExperimentsAndSelectsVerdicts) {
  const ClaimSelection all;
  EXPECT_TRUE(all.everything());
  EXPECT_TRUE(all.runs_experiment("E4"));
  EXPECT_TRUE(all.selects("E3a@1e-3"));
  EXPECT_FALSE(all.names_claims());
  const ClaimSelection only({"E1", "E3c"}, kKnown);
  EXPECT_TRUE(only.names_claims());
  EXPECT_TRUE(only.runs_experiment("E1"));
  EXPECT_TRUE(only.runs_experiment("E3"));  // through its claim E3c
  EXPECT_FALSE(only.runs_experiment("E2"));
  EXPECT_TRUE(only.selects("E1b"));  // a bare experiment keeps all of its verdicts
  EXPECT_TRUE(only.selects("E3c@1e-3"));
  EXPECT_FALSE(only.selects("E3a@1e-3"));
  EXPECT_FALSE(only.selects("E2a.W1"));
  EXPECT_TRUE(ClaimSelection({"E3"}, kKnown).selects("E3a@1e-3"));
  EXPECT_FALSE(ClaimSelection({"E3"}, kKnown).names_claims());
  EXPECT_EQ(only.claims_of("E3"), std::vector<std::string>{"E3c"});
  EXPECT_TRUE(only.claims_of("E1").empty());
  EXPECT_EQ(only.text(), "E1,E3c");
  // A confirmatory --only must name registered claims: E4 selects none of these.
  EXPECT_EQ(ClaimSelection({"E3a", "E4"}, kKnown).unmatched({"E1a", "E3a@5e-4"}), std::vector<std::string>{"E4"});
  EXPECT_TRUE(ClaimSelection({"E1", "E3a"}, kKnown).unmatched({"E1a", "E3a@5e-4"}).empty());
}

// E3c reads Pre-LN without warmup and Post-LN with the long warmup, at every seed they run.
TEST(XiongClaims, AClaimTrainsExactlyTheArmsItReads) {
  const Grids g = make_grids(false);
  const std::vector<TrainPoint> all = e3_points(g);
  const std::vector<TrainPoint> some = e3_points_for_claims(g, ClaimSelection({"E3c@1e-3"}, kKnown), all, true);
  ASSERT_EQ(some.size(), 2 * g.equivalence_seeds.size());
  for (const TrainPoint& p : some) {
    EXPECT_EQ(p.lr, "1e-3");
    EXPECT_TRUE((p.placement == "pre" && p.warmup == 1) || (p.placement == "post" && p.warmup == g.warmup_steps("long")))
        << p.name();
  }
  EXPECT_EQ(e3_points_for_claims(g, ClaimSelection({"E1", "E4"}, kKnown), all, true).size(), all.size());  // no E3 claim: unchanged
  EXPECT_TRUE(e3_points_for_claims(g, ClaimSelection({"E3c@1e-3"}, kKnown), e3_text_points(g), false).empty());
  EXPECT_FALSE(e3_points_for_claims(g, ClaimSelection({"E3c"}, kKnown), e3_text_points(g), false).empty());  // E3c.text@...
}

// A verdict on an estimate, its fields set one by one (GCC 12 at -O3 took the braced aggregate's
// string for "maybe uninitialized").
Verdict verdict(const std::string& id, const std::string& claim, Interval estimate, int64_t steps) {
  Verdict v;
  v.id = id;
  v.claim = claim;
  v.estimate = std::move(estimate);
  v.steps = steps;
  return v;
}

Interval interval(double estimate, double low, double high, int n, const std::string& method) {
  Interval i;
  i.estimate = estimate;
  i.low = low;
  i.high = high;
  i.n = n;
  i.method = method;
  return i;
}

TEST(XiongClaims, FreshVerdictsReplaceTheirRowsInOrder) {
  Verdict a = verdict("E1a", "flat", interval(0.1, 0.0, 0.2, 8, "bootstrap"), 0);
  Verdict b = verdict("E3a@1e-3", "warmup", interval(1.0, 0.5, 1.5, 5, "paired t"), 1000);
  b.decide_direction(0.0, Side::Above);
  const nlohmann::json old = nlohmann::json::array({a.to_json(), b.to_json()});
  Verdict fresh = b;
  fresh.estimate = interval(-1.0, -1.5, -0.5, 5, "paired t");
  fresh.decide_direction(0.0, Side::Above);
  Verdict added = verdict("E3c@1e-3", "", interval(0.0, -0.1, 0.1, 10, "paired t"), 1000);
  const std::vector<Verdict> merged = merge_verdicts(old, {fresh, added});
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].id, "E1a");
  EXPECT_DOUBLE_EQ(merged[0].estimate.estimate, 0.1);
  EXPECT_EQ(merged[1].id, "E3a@1e-3");
  EXPECT_EQ(merged[1].verdict, "contradicted");
  EXPECT_EQ(merged[2].id, "E3c@1e-3");
  // The JSON round trip keeps what the table and Holm's adjustment need.
  const Verdict back = Verdict::from_json(b.to_json());
  EXPECT_EQ(back.verdict, b.verdict);
  EXPECT_DOUBLE_EQ(back.p_value(), b.p_value());
  EXPECT_LT(b.p_value(), 0.05);
}

}  // namespace
}  // namespace normlab::xiong
