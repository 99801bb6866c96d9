// The v3 design of the Xiong suite, each item of the review as a test that the v2 design fails:
// tokens and positions on one scale in every suite config; warmup arms that differ only in the
// warmup phase; fixed time-to-quality targets with censoring; Wortsman's sensitivity over >= 5
// lrs; vanilla SGD at the paper's rates; one divergence rule; seeds that can decide a margin.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "config/config.h"
#include "nn/init.h"
#include "nn/transformer.h"
#include "optim/schedule.h"
#include "xiong/arms.h"
#include "xiong/e3_common.h"
#include "xiong/experiments.h"
#include "xiong/outcomes.h"

namespace normlab::xiong {
namespace {

const std::string kDir = std::string(NORMLAB_SOURCE_DIR) + "/xiong/configs/";

double mean_square(const std::vector<double>& v) {
  double s = 0;
  for (const double x : v) s += x * x;
  return s / static_cast<double>(v.size());
}

// Per-element variance of the token part (the embedding times its multiplier) and of the position
// part (the learned table or the sinusoidal one) of the model's input at initialization.
std::pair<double, double> input_parts(ModelConfig m) {
  if (m.vocab_size <= 0) m.vocab_size = 64;
  TransformerLM model(m);
  double token = NAN, position = NAN;
  for (const auto& [name, param] : model.named_parameters()) {
    if (name == "tok_emb.weight") token = mean_square(param.value().to_vector()) * std::pow(embedding_multiplier(m), 2);
    if (name == "pos_emb.weight") position = mean_square(param.value().to_vector());
  }
  if (m.position_embedding == PositionEmbedding::Sinusoidal)
    position = mean_square(sinusoidal_positions(m.context_length, m.d_model, DType::F64).to_vector());
  return {token, position};
}

TEST(XiongDesign, TokensAndPositionsEnterOnOneScaleInEverySuiteConfig) {
  for (const std::string file : {"theorem1.toml", "amplification.toml", "copy_task.toml", "copy_task_quick.toml",
                                 "text_corpus.toml", "text_corpus_quick.toml"}) {
    RunConfig c = load_config(kDir + file);
    if (c.model.vocab_size <= 0 || c.data.source == "copy") c.model.vocab_size = c.data.copy_vocab;
    const auto [token, position] = input_parts(c.model);
    ASSERT_TRUE(std::isfinite(token) && std::isfinite(position)) << file;
    EXPECT_LE(std::max(token, position) / std::min(token, position), 4.0) << file << ": token " << token
                                                                           << ", position " << position;
  }
  // The v2 inputs (sqrt(d) tokens, a learned table at its Xavier init) fail the same check.
  RunConfig v2 = load_config(kDir + "copy_task.toml", {"model.position_embedding=learned"});
  v2.model.vocab_size = v2.data.copy_vocab;
  const auto [token, position] = input_parts(v2.model);
  EXPECT_GT(token / position, 40.0);
}

double lr_at(const RunConfig& c, int64_t step) { return learning_rate(c.schedule, c.optim.lr, step, c.train.steps); }

// The primary design: after the longest warmup every arm has the same rate; before it the
// no-warmup arm is at lr_max; the literal arm decays from the first update; section 4's arm drops
// x0.1 at its step. The tables' cumulative lr shows the difference.
TEST(XiongDesign, WarmupArmsDifferOnlyInTheWarmupPhase) {
  for (const bool quick : {false, true}) {
    const Grids g = make_grids(quick);
    const std::string base = kDir + g.copy_config;
    const int64_t t_long = g.warmup_steps("long");
    for (const std::string& lr : g.lrs) {
      std::vector<RunConfig> arms;
      for (const WarmupLevel& w : g.warmups) arms.push_back(point_config(base, e3_arm("post", lr, w.steps)));
      ASSERT_EQ(arms[0].schedule.decay_start, t_long);
      for (int64_t step = 0; step < arms[0].train.steps; ++step) {
        if (step < t_long) {
          EXPECT_DOUBLE_EQ(lr_at(arms[0], step), arms[0].optim.lr) << step;
        } else {
          for (const RunConfig& a : arms) ASSERT_DOUBLE_EQ(lr_at(a, step), lr_at(arms[0], step)) << step;
        }
      }
      EXPECT_GT(cumulative_lr(arms[0]), cumulative_lr(arms.back()));
      const RunConfig literal = point_config(base, literal_arm("post", lr));
      EXPECT_NEAR(lr_at(literal, 99), arms[0].optim.lr / 10, 1e-12);
      const RunConfig s4 = point_config(base, section4_arm(lr, g.section4_drop));
      EXPECT_DOUBLE_EQ(lr_at(s4, g.section4_drop - 1), s4.optim.lr);
      EXPECT_NEAR(lr_at(s4, g.section4_drop), 0.1 * s4.optim.lr, 1e-3 * s4.optim.lr);
    }
    EXPECT_NE(schedule_words(point_config(base, e3_arm("pre", g.lrs[0], 1)).schedule),
              schedule_words(point_config(base, literal_arm("pre", g.lrs[0])).schedule));
  }
}

RunOutcome outcome(std::vector<std::pair<double, double>> val, int64_t steps = 2000) {
  RunOutcome r;
  r.status = RunStatus::Completed;
  r.steps = steps;
  r.initial_loss = 4.2;
  r.val_curve = std::move(val);
  r.train_curve = r.val_curve;
  r.final_val = r.val_curve.back().second;
  return r;
}

// A run that never reaches the target is censored at its length, not counted as a time.
TEST(XiongDesign, TimeToTargetCensorsRunsThatNeverReachIt) {
  const RunOutcome fast = outcome({{500, 2.0}, {1000, 0.4}, {2000, 0.05}});
  const RunOutcome never = outcome({{500, 4.1}, {1000, 4.1}, {2000, 4.1}});
  EXPECT_TRUE(time_to(fast, 0.5).reached);
  EXPECT_DOUBLE_EQ(time_to(fast, 0.5).time, 1000);
  EXPECT_FALSE(time_to(never, 0.5).reached);
  EXPECT_DOUBLE_EQ(time_to(never, 0.5).time, 2000);
  for (const bool quick : {false, true}) EXPECT_FALSE(make_grids(quick).copy_targets.empty());
}

// Runs of `fast` (reaching 0.5 at step 100) and `slow` with the given curve, one per seed of the grid;
// `vary` may change each slow run after its seed is set.
TrainingResults time_runs(const Grids& g, const TrainPoint& fast, const TrainPoint& slow,
                          const std::vector<std::pair<double, double>>& slow_curve,
                          const std::function<void(RunOutcome&)>& vary = {}) {
  TrainingResults runs;
  for (const int seed : seeds_of(g, Task::Copy, fast)) {
    RunOutcome r = outcome({{50, 2.0}, {100, 0.5}, {300, 0.1}}, 300);
    r.point = fast;
    r.point.seed = seed;
    runs.add(r);
  }
  for (const int seed : seeds_of(g, Task::Copy, slow)) {
    RunOutcome r = outcome(slow_curve, 300);
    r.point = slow;
    r.point.seed = seed;
    if (vary) vary(r);
    runs.add(r);
  }
  return runs;
}

// E3d's verdict: the arm that reaches the target in a quarter of the steps is reproduced as faster,
// with the ratio of Kaplan-Meier medians as its estimate; the reverse is contradicted.
TEST(XiongDesign, TimeVerdictComparesKaplanMeierMedians) {
  Context ctx;
  ctx.grids = make_grids(true);
  ctx.config_dir = kDir;
  const Grids& g = ctx.grids;
  const TrainPoint fast = section4_arm(g.lrs[0], g.section4_drop), slow = e3_arm("post", g.lrs[0], g.warmup_steps("long"));
  const TrainingResults runs = time_runs(g, fast, slow, {{100, 3.0}, {200, 2.0}, {300, 0.9}}, [](RunOutcome& r) {
    r.val_curve.insert(r.val_curve.begin() + 2, {250, 0.7});
    r.val_curve.insert(r.val_curve.begin() + 1, {150, r.point.seed % 2 ? 0.9 : 2.5});
  });
  std::string table;
  const Verdict v = time_verdict(ctx, Task::Copy, runs, fast, slow, 1.0, "E3d-test", table);
  EXPECT_EQ(v.verdict, "reproduced") << interval_text(v.estimate);
  EXPECT_LT(v.estimate.high, 1.0);
  EXPECT_LT(v.p_value(), 0.05);
  EXPECT_EQ(v.task, "copy");
  const Verdict reverse = time_verdict(ctx, Task::Copy, runs, slow, fast, 1.0, "E3d-test", table);
  EXPECT_EQ(reverse.verdict, "contradicted") << interval_text(reverse.estimate);
}

// A target the slower arm never reaches in most runs: its run length stands in for its median, so
// the ratio is a finite upper bound (not 0) and the note says so.
TEST(XiongDesign, TimeVerdictBoundsAMedianThatIsNotReached) {
  Context ctx;
  ctx.grids = make_grids(true);
  ctx.config_dir = kDir;
  const Grids& g = ctx.grids;
  const TrainPoint fast = section4_arm(g.lrs[0], g.section4_drop), slow = e3_arm("post", g.lrs[0], g.warmup_steps("long"));
  const TrainingResults runs = time_runs(g, fast, slow, {{100, 3.0}, {200, 2.0}, {300, 1.5}});
  std::string table;
  const Verdict v = time_verdict(ctx, Task::Copy, runs, fast, slow, 1.0, "E3d-test", table);
  EXPECT_DOUBLE_EQ(v.estimate.estimate, 100.0 / 300.0);
  EXPECT_EQ(v.verdict, "reproduced") << interval_text(v.estimate);
  EXPECT_NE(v.note.find("upper bound"), std::string::npos) << v.note;
}

// Two arms that both stay at chance: however consistent their difference, it is no evidence about
// warmup, so the claim is inconclusive; with one arm learning the same comparison is decided.
TEST(XiongDesign, ADifferenceBetweenTwoArmsThatNeitherLearnedDecidesNothing) {
  Context ctx;
  ctx.grids = make_grids(true);
  ctx.config_dir = kDir;
  const Grids& g = ctx.grids;
  const TrainPoint none = e3_arm("post", g.lrs[0], 1, "sgd"), lng = e3_arm("post", g.lrs[0], g.warmup_steps("long"), "sgd");
  const auto runs_with = [&](double none_final, double long_final) {
    TrainingResults runs;
    for (const auto& [arm, final, spread] : {std::tuple{none, none_final, 0.001}, std::tuple{lng, long_final, 0.0005}})
      for (const int seed : seeds_of(g, Task::Copy, arm)) {
        RunOutcome r = outcome({{100, 4.1}, {300, final + spread * seed}}, 300);
        r.point = arm;
        r.point.seed = seed;
        runs.add(r);
      }
    return runs;
  };
  const Verdict chance = difference_verdict(ctx, "E3h-test", "claim", "paper", "quantity", runs_with(4.12, 4.10), none,
                                            lng, 300, 0.0, Side::Above);
  EXPECT_EQ(chance.verdict, "inconclusive") << interval_text(chance.estimate);
  EXPECT_GT(chance.estimate.low, 0.0);  // the interval alone would have decided it
  EXPECT_NE(chance.note.find("neither arm learned"), std::string::npos) << chance.note;
  const Verdict learned = difference_verdict(ctx, "E3h-test", "claim", "paper", "quantity", runs_with(4.12, 0.5), none,
                                             lng, 300, 0.0, Side::Above);
  EXPECT_EQ(learned.verdict, "reproduced") << interval_text(learned.estimate);
}

// Issue 35 item 8: >= 7 rates from 1e-4 to 3e-2, and E4's warmup at most 5% of the run.
TEST(XiongDesign, SensitivitySubtractsEachSettingsOwnBestOverAtLeastSevenLrs) {
  EXPECT_DOUBLE_EQ(lr_sensitivity({1.0, 2.0, 3.0, 4.0, 5.0}), 2.0);
  EXPECT_DOUBLE_EQ(lr_sensitivity({0.5, 0.5, 0.5, 0.5, 0.5}), 0.0);  // flat: insensitive, whatever its level
  EXPECT_TRUE(std::isnan(lr_sensitivity({1.0, NAN, 2.0})));
  const Grids g = make_grids(false);
  const std::vector<std::string> lrs = g.all_lrs();
  ASSERT_GE(lrs.size(), 7u);
  EXPECT_DOUBLE_EQ(std::strtod(lrs.front().c_str(), nullptr), 1e-4);
  EXPECT_DOUBLE_EQ(std::strtod(lrs.back().c_str(), nullptr), 3e-2);
  EXPECT_GE(g.e4_warmup, 2);
  EXPECT_LE(static_cast<double>(g.e4_warmup), 0.05 * static_cast<double>(load_config(kDir + g.copy_config).train.steps));
  for (size_t i = 1; i < lrs.size(); ++i) {  // log-spaced: neighbours within a factor 1.5 .. 4
    const double ratio = std::strtod(lrs[i].c_str(), nullptr) / std::strtod(lrs[i - 1].c_str(), nullptr);
    EXPECT_GE(ratio, 1.5);
    EXPECT_LE(ratio, 4.0);
  }
}

TEST(XiongDesign, SgdIsVanillaAtThePapersRates) {
  const Grids g = make_grids(false);
  EXPECT_EQ(g.sgd_lrs, (std::vector<std::string>{"5e-3", "1e-3"}));
  EXPECT_DOUBLE_EQ(load_config(kDir + g.copy_config).optim.momentum, 0.0);
}

// One rule: non-finite, or above 1.5 ln V after step 100. A loss of 31.4 nats is a divergence even
// when the trainer completed the run; an early spike before step 100 is not.
TEST(XiongDesign, OneDivergenceRuleForEveryTable) {
  TrainingResults runs;
  RunOutcome high = outcome({{50, 4.0}, {150, 31.4}, {2000, 5.0}});
  high.point.seed = 1;
  RunOutcome early = outcome({{50, 9.0}, {150, 3.0}, {2000, 1.0}});
  early.point.seed = 2;
  runs.add(high);
  runs.add(early);
  runs.apply_divergence_rule(1.5 * std::log(64.0), Baseline::kDivergenceAfter);
  TrainPoint p;
  p.seed = 1;
  EXPECT_EQ(runs.find(p)->status, RunStatus::Diverged);
  EXPECT_EQ(runs.find(p)->diverged_step, 150);
  EXPECT_DOUBLE_EQ(runs.find(p)->capped_final(), 4.2);  // counts as its loss at init
  p.seed = 2;
  EXPECT_EQ(runs.find(p)->status, RunStatus::Completed);
}

// E3c's arms run the seeds the pilot's spread asks for to decide the margin.
TEST(XiongDesign, SeedsToDecideAMargin) {
  EXPECT_EQ(seeds_to_decide(0.137, 0.05), 32);  // v2's E3c spread and margin: "about 30 seeds"
  EXPECT_EQ(seeds_to_decide(0.137, 0.1), 10);
  EXPECT_EQ(seeds_to_decide(0.0, 0.1), 2);
  const Grids g = make_grids(false);
  EXPECT_GE(static_cast<int>(g.equivalence_seeds.size()), seeds_to_decide(0.137, g.equivalence_margin));
  EXPECT_EQ(seeds_of(g, Task::Copy, e3_arm("pre", "1e-3", 1)).size(), g.equivalence_seeds.size());
  EXPECT_EQ(seeds_of(g, Task::Copy, e3_arm("pre", "1e-3", 50)).size(), g.seeds.size());
}

}  // namespace
}  // namespace normlab::xiong
