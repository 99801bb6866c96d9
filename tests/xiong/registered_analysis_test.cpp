// The registered analysis of protocol v4 (xiong/registered_analysis.h) on synthetic runs of the
// committed registration's claims: each primary test decides its claim by the registered rule, a
// missing run leaves a claim undecided, Holm counts the whole family, and the report has one row
// per registered training claim in its family's table.
#include <gtest/gtest.h>

#include <cmath>

#include "xiong/registered_analysis.h"

namespace normlab::xiong {
namespace {

const std::string kRegistration = std::string(NORMLAB_SOURCE_DIR) + "/xiong/registration.toml";

// A completed run whose validation loss is `start` until `drop_at`, then `level` (evaluated every
// 50 steps, as copy_task_v4.toml), with a train loss at step 1 of `start`.
RunOutcome run_of(const TrainPoint& p, int64_t steps, double start, double level, int64_t drop_at) {
  RunOutcome r;
  r.point = p;
  r.status = RunStatus::Completed;
  r.steps = steps;
  r.initial_loss = start;
  r.train_curve.emplace_back(1, start);
  for (int64_t s = 50; s <= steps; s += 50) r.val_curve.emplace_back(static_cast<double>(s), s < drop_at ? start : level);
  r.final_val = r.val_curve.back().second;
  return r;
}

// Every run of `claim`: arm a's seed i gets level(a, i) from drop_at(a, i) on.
TrainingResults runs_of(const Registration& reg, const RegisteredClaim& claim,
                        const std::function<double(size_t, size_t)>& level,
                        const std::function<int64_t(size_t, size_t)>& drop_at = [](size_t, size_t) { return 500; }) {
  TrainingResults out;
  for (size_t a = 0; a < claim.points.size(); ++a) {
    const std::vector<int> seeds = reg.seeds_of(claim);
    for (size_t i = 0; i < seeds.size(); ++i) {
      TrainPoint p = parse_point(claim.points[a], "test");
      p.seed = seeds[i];
      out.add(run_of(p, claim.steps, 4.1, level(a, i), drop_at(a, i)));
    }
  }
  return out;
}

// A small spread per seed so that t intervals have a width.
double jitter(size_t i) { return 0.004 * (static_cast<double>(i % 5) - 2.0); }

TEST(FinalQuality, MeansTheEvaluationsOfTheLastFifthAndCountsADivergedRunAsInit) {
  TrainPoint p;
  RunOutcome r = run_of(p, 4000, 4.1, 0.2, 3500);  // 0.8 * 4000 = 3200: evaluations 3250..4000 (16)
  // 3250..3450 at 4.1 (5 evaluations), 3500..4000 at 0.2 (11): the mean of those 16.
  EXPECT_NEAR(final_quality(r), (5 * 4.1 + 11 * 0.2) / 16, 1e-12);
  r.status = RunStatus::Diverged;
  EXPECT_EQ(final_quality(r), 4.1);
  r.status = RunStatus::Missing;
  EXPECT_TRUE(std::isnan(final_quality(r)));
}

TEST(RegisteredAnalysis, SignFlipClaimReproducedWhenEverySeedNeedsWarmupAndContradictedReversed) {
  const Registration reg = load_registration(kRegistration);
  const RegisteredClaim& c = reg.require("E3a@5e-4");  // arms: none, long; none - long predicted above
  const ClaimAnalysis yes = analyse_claim(reg, c, runs_of(reg, c, [](size_t a, size_t i) {
    return a == 0 ? 3.0 + jitter(i) : 0.05; }), 2.07);
  EXPECT_EQ(yes.verdict, "reproduced");
  EXPECT_EQ(yes.runs_found, 20);
  EXPECT_NEAR(yes.primary_p, 2.0 / 1024, 1e-12);  // 10 positive differences: the smallest exact p
  EXPECT_GT(yes.estimate.low, 0);
  EXPECT_NE(yes.secondary.find("0/10 vs 10/10"), std::string::npos) << yes.secondary;  // learned counts
  const ClaimAnalysis no = analyse_claim(reg, c, runs_of(reg, c, [](size_t a, size_t i) {
    return a == 1 ? 3.0 + jitter(i) : 0.05; }), 2.07);
  EXPECT_EQ(no.verdict, "contradicted");
  // Half the seeds each way: no decision.
  const ClaimAnalysis mixed = analyse_claim(reg, c, runs_of(reg, c, [](size_t a, size_t i) {
    return (a == 0) == (i % 2 == 0) ? 3.0 : 0.05; }), 2.07);
  EXPECT_EQ(mixed.verdict, "inconclusive");
}

TEST(RegisteredAnalysis, EquivalenceClaimDecidedOnTheNinetyPercentInterval) {
  const Registration reg = load_registration(kRegistration);
  const RegisteredClaim& c = reg.require("E3c@5e-4");  // margin [-0.05, 0.05]
  const ClaimAnalysis same = analyse_claim(reg, c, runs_of(reg, c, [](size_t a, size_t i) {
    return 0.02 + (a == 0 ? jitter(i) : 0.0); }), 2.07);
  EXPECT_EQ(same.verdict, "reproduced");
  EXPECT_LT(same.primary_p, 0.05);
  EXPECT_GE(same.decision_interval.low, -0.05);
  EXPECT_LE(same.decision_interval.high, 0.05);
  const ClaimAnalysis apart = analyse_claim(reg, c, runs_of(reg, c, [](size_t a, size_t i) {
    return a == 0 ? 0.3 + jitter(i) : 0.02; }), 2.07);
  EXPECT_EQ(apart.verdict, "contradicted");
  // Centred on the margin's edge: neither inside nor wholly outside.
  const ClaimAnalysis edge = analyse_claim(reg, c, runs_of(reg, c, [](size_t a, size_t i) {
    return a == 0 ? 0.07 + 5 * jitter(i) : 0.02; }), 2.07);
  EXPECT_EQ(edge.verdict, "inconclusive");
}

TEST(RegisteredAnalysis, TimeClaimUsesTheLogRankTestAndPostMinusPreRmst) {
  const Registration reg = load_registration(kRegistration);
  const RegisteredClaim& c = reg.require("E3d@5e-4");  // arms: Pre-LN none, Post-LN long
  const TrainingResults runs = runs_of(
      reg, c, [](size_t, size_t) { return 0.05; },
      [](size_t a, size_t i) { return static_cast<int64_t>(a == 0 ? 500 + 50 * (i % 3) : 1000 + 50 * (i % 3)); });
  const ClaimAnalysis sooner = analyse_claim(reg, c, runs, 2.07);
  EXPECT_EQ(sooner.verdict, "reproduced");
  EXPECT_NEAR(sooner.estimate.estimate, 500.0, 1e-9);  // every Post-LN run 500 steps later
  EXPECT_LT(sooner.primary_p, 0.05);
  // Post-LN first instead: contradicted.
  const TrainingResults reversed = runs_of(
      reg, c, [](size_t, size_t) { return 0.05; },
      [](size_t a, size_t i) { return static_cast<int64_t>(a == 1 ? 500 + 50 * (i % 3) : 1000 + 50 * (i % 3)); });
  EXPECT_EQ(analyse_claim(reg, c, reversed, 2.07).verdict, "contradicted");
}

TEST(RegisteredAnalysis, InteractionClaimSubtractsThePreLnWarmupEffect) {
  const Registration reg = load_registration(kRegistration);
  const RegisteredClaim& c = reg.require("E3.text.did@1e-3");  // Post none, Post long, Pre none, Pre long
  // Warmup helps both placements by 0.4: no interaction, although Post-LN needs warmup.
  const ClaimAnalysis none = analyse_claim(reg, c, runs_of(reg, c, [](size_t a, size_t i) {
    return (a % 2 == 0 ? 2.4 : 2.0) + jitter(i) * (a == 0 ? 1 : 0); }), 3.4);
  EXPECT_NEAR(none.estimate.estimate, 0.0, 0.01);
  EXPECT_EQ(none.verdict, "inconclusive");
  const ClaimAnalysis helps = analyse_claim(reg, c, runs_of(reg, c, [](size_t a, size_t i) {
    return (a == 0 ? 2.8 : 2.0) + jitter(i) * (a == 0 ? 1 : 0); }), 3.4);
  EXPECT_NEAR(helps.estimate.estimate, 0.8, 0.01);
  EXPECT_EQ(helps.verdict, "reproduced");
}

TEST(RegisteredAnalysis, AMissingRunLeavesTheClaimUndecidedAndHolmCountsTheWholeFamily) {
  const Registration reg = load_registration(kRegistration);
  const RegisteredClaim& c = reg.require("E3a@5e-4");
  ConfirmatoryRuns runs;
  runs.copy = runs_of(reg, c, [](size_t a, size_t i) { return a == 0 ? 3.0 + jitter(i) : 0.05; });
  const std::vector<ClaimAnalysis> all = analyse_registered(reg, runs, 2.07, NAN);
  const size_t family = reg.family("paper").size();
  for (const ClaimAnalysis& a : all) {
    if (a.claim->id == "E3a@5e-4") {
      EXPECT_EQ(a.verdict, "reproduced");
      EXPECT_NEAR(a.holm_p, std::min(1.0, static_cast<double>(family) * 2.0 / 1024), 1e-12);
    } else {  // no runs, and no init probes given
      EXPECT_EQ(a.verdict, "incomplete") << a.claim->id;
      EXPECT_TRUE(std::isnan(a.primary_p)) << a.claim->id;
    }
  }
  // One run short: undecided, whatever the others say.
  TrainPoint dropped = parse_point(c.points[0], "test");
  dropped.seed = reg.seeds_of(c).back();
  TrainingResults partial = runs_of(reg, c, [](size_t a, size_t i) { return a == 0 ? 3.0 + jitter(i) : 0.05; });
  RunOutcome missing;
  missing.point = dropped;
  partial.add(missing);  // replaces that run by one without a result
  const ClaimAnalysis undecided = analyse_claim(reg, c, partial, 2.07);
  EXPECT_EQ(undecided.verdict, "incomplete");
  EXPECT_EQ(undecided.runs_found, 19);
}

// The report has one row per registered claim, in the table of its own family.
TEST(RegisteredAnalysis, ReportRowsAgreeWithTheRegistration) {
  const Registration reg = load_registration(kRegistration);
  const std::vector<ClaimAnalysis> all = analyse_registered(reg, ConfirmatoryRuns{}, 2.07, NAN);
  const std::string md = registered_tables(all, reg.alpha);
  const size_t exploratory = md.find("### Exploratory");
  const size_t details = md.find("Per claim:");
  ASSERT_NE(details, std::string::npos);
  for (const RegisteredClaim& c : reg.claims) {
    const std::string row = "| " + c.id + " | ";
    const size_t at = md.find(row);
    ASSERT_NE(at, std::string::npos) << c.id;
    EXPECT_EQ(md.find(row, at + 1), std::string::npos) << c.id << " twice";
    EXPECT_LT(at, details);
    EXPECT_EQ(c.family == "exploratory", exploratory != std::string::npos && at > exploratory) << c.id;
  }
  EXPECT_EQ(all.size(), reg.claims.size());
}

}  // namespace
}  // namespace normlab::xiong
