// The Xiong et al. 2020 reproduction's measurements (xiong/): slope fits, the
// Theorem 1 probe on a tiny grid, Lemma 2's Post-LN value, the amplification probe, run
// classification, and that the suite's grids and shipped TOML files load.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "autograd/ops.h"
#include "autograd/tape.h"
#include "config/config.h"
#include "core/ops.h"
#include "core/random.h"
#include "xiong/arms.h"
#include "xiong/experiments.h"
#include "xiong/grids.h"
#include "xiong/outcomes.h"
#include "xiong/probes.h"
#include "xiong/report.h"
#include "core/error.h"
#include "xiong_test_util.h"

namespace normlab::xiong {
namespace {

TEST(XiongSlopes, LogLogSlopeRecoversAPowerLaw) {
  const std::vector<double> x = {2, 4, 8, 16, 32};
  std::vector<double> y_half, y_flat, y_noisy;
  for (const double v : x) {
    y_half.push_back(3.0 / std::sqrt(v));
    y_flat.push_back(0.7);
  }
  EXPECT_NEAR(loglog_slope(x, y_half), -0.5, 1e-12);
  EXPECT_NEAR(loglog_slope(x, y_flat), 0.0, 1e-12);
  // Multiplicative noise that is symmetric in log space around a slope of 1 leaves the fit at 1.
  const std::vector<double> noise = {1.1, 1 / 1.1, 1.0, 1.1, 1 / 1.1};
  for (size_t i = 0; i < x.size(); ++i) y_noisy.push_back(x[i] * noise[i]);
  EXPECT_NEAR(loglog_slope(x, y_noisy), 1.0, 0.05);
  EXPECT_NEAR(linear_slope({0, 1, 2, 3}, {1, 3, 5, 7}), 2.0, 1e-12);
  EXPECT_EQ(linear_slope({1}, {1}), 0.0);  // one point: no slope
}

// Theorem 1 on a tiny grid: the Pre-LN exponent of L is clearly below the Post-LN one.
TEST(XiongProbes, TheoremOnePreLnExponentBelowPostLn) {
  const std::vector<double> depths = {2, 4, 8, 16};
  const ProbeBatch probe{4, 16, 2, false};
  double post_sum = 0, pre_sum = 0;
  const int seeds = 2;
  for (int seed = 1; seed <= seeds; ++seed) {
    std::vector<double> post, pre;
    for (const double L : depths) {
      post.push_back(measure_layer_grads(tiny_model("post", static_cast<int64_t>(L), seed), probe, 100 + seed)
                         .w2_mean_norm.back());
      pre.push_back(measure_layer_grads(tiny_model("pre", static_cast<int64_t>(L), seed), probe, 100 + seed)
                        .w2_mean_norm.back());
    }
    post_sum += loglog_slope(depths, post);
    pre_sum += loglog_slope(depths, pre);
  }
  const double post = post_sum / seeds, pre = pre_sum / seeds;
  EXPECT_LT(pre, post - 0.2) << "Post-LN exponent " << post << ", Pre-LN exponent " << pre;
  EXPECT_LT(pre, -0.2);
  EXPECT_GT(post, -0.3);
}

TEST(XiongProbes, LayerGradsHaveOneValuePerLayerAndPositiveNorms) {
  const LayerGrads r = measure_layer_grads(tiny_model("pre", 3, 1), {2, 8, 3, false}, 7);
  ASSERT_EQ(r.w1_mean_norm.size(), 3u);
  ASSERT_EQ(r.w2_norm_of_mean.size(), 3u);
  ASSERT_EQ(r.residual_sq_per_d.size(), 4u);  // entering each block, then the final stream
  ASSERT_EQ(r.post_ffn_sum_sq_per_d.size(), 3u);
  for (size_t l = 0; l < 3; ++l) {
    EXPECT_GT(r.w2_mean_norm[l], 0.0);
    EXPECT_GT(r.attn_mean_norm[l], 0.0);
    // The norm of a mean is at most the mean of the norms (triangle inequality).
    EXPECT_LE(r.w1_norm_of_mean[l], r.w1_mean_norm[l] * (1 + 1e-6));
    EXPECT_LE(r.w2_norm_of_mean[l], r.w2_mean_norm[l] * (1 + 1e-6));
  }
  // Pre-LN's residual stream grows block by block.
  EXPECT_GT(r.residual_sq_per_d.back(), r.residual_sq_per_d.front());
}

// Lemma 2, Post-LN: with FFN width d, N(0, 1/d)-like weights and a LayerNorm output h,
// ||h + FFN(h)||^2 / d = 1 + 1/2.
TEST(XiongProbes, LemmaTwoPostLnValueInTheTheorySetting) {
  ModelConfig c = tiny_model("post", 4, 3);
  c.d_model = 64;
  c.d_ff = 64;
  c.context_length = 32;
  const LayerGrads r = measure_layer_grads(c, {8, 32, 1, false}, 11);
  double mean = 0;
  for (const double v : r.post_ffn_sum_sq_per_d) mean += v / static_cast<double>(r.post_ffn_sum_sq_per_d.size());
  EXPECT_NEAR(mean, 1.5, 0.15);
}

TEST(XiongProbes, UnitVarianceInputStartsTheStreamAtOne) {
  ModelConfig c = tiny_model("pre", 2, 5);
  c.tie_embeddings = false;
  const LayerGrads r = measure_layer_grads(c, {4, 16, 1, true}, 3);
  EXPECT_NEAR(r.residual_sq_per_d.front(), 1.0, 0.15);
  const LayerGrads plain = measure_layer_grads(c, {4, 16, 1, false}, 3);
  EXPECT_LT(plain.residual_sq_per_d.front(), 0.5);  // Xavier embeddings are small
  c.embedding_scale = EmbeddingScale::SqrtD;  // the rescaling accounts for the forward's sqrt(d) multiplier
  EXPECT_NEAR(measure_layer_grads(c, {4, 16, 1, true}, 3).residual_sq_per_d.front(), 1.0, 0.15);
  // fairseq's pairing alone (N(0, 1/d) times sqrt(d)) starts the stream near 1 plus the positions.
  const double scaled = measure_layer_grads(c, {4, 16, 1, false}, 3).residual_sq_per_d.front();
  EXPECT_GT(scaled, 0.8);
  EXPECT_LT(scaled, 1.4);
}

// One Adam step of lr 1e-4 on the tiny model of `placement`, through train_step.
RunConfig one_adam_step(const std::string& placement) {
  RunConfig c;
  c.model = tiny_model(placement, 6, 1);
  c.optim.name = OptimizerKind::Adam;
  c.optim.lr = 1e-4;
  return c;
}

TEST(XiongProbes, DeepNormMovesTheOutputLessThanPostLn) {
  const ProbeBatch probe{4, 16, 1, false};
  const double post = output_change_after_one_step(one_adam_step("post"), probe, 9);
  const double deep = output_change_after_one_step(one_adam_step("deepnorm"), probe, 9);
  EXPECT_GT(post, 0.0);
  EXPECT_GT(deep, 0.0);
  EXPECT_LT(deep, post);
}

// The reference: the same batch, loss, backward and one optimizer step at lr, composed by hand.
double output_change_by_hand(const RunConfig& config, const ProbeBatch& probe, uint64_t data_seed) {
  TransformerLM model(config.model);
  Generator gen(data_seed);
  Tensor ids = random_tokens(config.model.vocab_size, probe.batch, probe.context, gen);
  Tensor targets = random_tokens(config.model.vocab_size, probe.batch, probe.context, gen);
  Tensor before;
  {
    NoGradGuard no_grad;
    before = model.forward(ids).value().clone();
  }
  backward(model.loss(ids, targets));
  auto optimizer = make_optimizer(config.optim, model.named_parameters());
  NoGradGuard no_grad;
  optimizer->step(config.optim.lr);
  const Tensor after = model.forward(ids).value();
  return std::sqrt(ops::sum_squares(ops::sub(after, before)) / ops::sum_squares(before));
}

TEST(XiongProbes, TheOutputChangeIsOneTrainStepOfTheConfig) {
  const ProbeBatch probe{2, 8, 1, false};
  const RunConfig adam = one_adam_step("post");
  EXPECT_NEAR(output_change_after_one_step(adam, probe, 5), output_change_by_hand(adam, probe, 5),
              1e-9 * output_change_by_hand(adam, probe, 5));
  // The config's schedule applies: warmup over 10 steps takes the first step at lr / 10.
  RunConfig warm = adam;
  warm.schedule.warmup_steps = 10;
  const double ratio = output_change_after_one_step(warm, probe, 5) / output_change_after_one_step(adam, probe, 5);
  EXPECT_NEAR(ratio, 0.1, 0.02);
  // And its optimizer: one SGD step is not Adam's sign-like step.
  RunConfig sgd = adam;
  sgd.optim.name = OptimizerKind::Sgd;
  EXPECT_NEAR(output_change_after_one_step(sgd, probe, 5), output_change_by_hand(sgd, probe, 5),
              1e-9 * output_change_by_hand(sgd, probe, 5));
  EXPECT_GT(std::abs(std::log(output_change_after_one_step(sgd, probe, 5) / output_change_after_one_step(adam, probe, 5))),
            0.5);
}

TEST(XiongProbes, TimingReturnsSideBySideSamples) {
  ModelConfig ln = tiny_model("pre", 1, 1), rms = ln;
  rms.norm_type = NormType::RmsNorm;
  RunConfig ln_run, rms_run;
  ln_run.model = ln;
  rms_run.model = rms;
  const auto step = step_ms_samples({ln_run, rms_run}, {2, 8, 1, false}, 1, 3);
  ASSERT_EQ(step.size(), 2u);
  ASSERT_EQ(step[0].size(), 3u);  // repeats, warmup steps not recorded
  ASSERT_EQ(step[1].size(), 3u);
  for (const double ms : step[0]) EXPECT_GT(ms, 0.0);
  const auto norm = norm_ms_samples(ln, {NormType::LayerNorm, NormType::RmsNorm}, 16, 1, 4);
  ASSERT_EQ(norm.size(), 2u);
  EXPECT_EQ(norm[1].size(), 4u);
}

// The update-size probe trains like the trainer: its first update of a run equals lr-sized Adam
// steps (Adam's first step moves every weight by lr * sign(g) up to eps), so the relative update of
// a block is about lr * sqrt(numel) / ||W||, and a zero learning rate moves nothing.
TEST(XiongProbes, BlockUpdateRatiosFollowTheLearningRate) {
  RunConfig c;
  c.model = tiny_model("post", 2, 1);
  c.data.source = "copy";
  c.data.copy_length = 4;
  c.data.copy_vocab = 8;
  c.train.batch_size = 4;
  c.train.context = 8;
  c.model.context_length = 8;
  c.optim.name = OptimizerKind::Adam;
  c.optim.lr = 1e-3;
  c.schedule.kind = ScheduleKind::Constant;
  const auto small = block_update_ratios(c, 3);
  ASSERT_EQ(small.size(), 3u);
  ASSERT_EQ(small[0].size(), 2u);
  c.optim.lr = 4e-3;
  const auto large = block_update_ratios(c, 1);
  for (size_t l = 0; l < 2; ++l) {
    EXPECT_GT(small[0][l], 0.0);
    EXPECT_NEAR(large[0][l] / small[0][l], 4.0, 0.4) << "layer " << l;  // first step: proportional to lr
  }
}

TEST(XiongOutcomes, CappedLossFirstStepBelowAndFractions) {
  RunOutcome r;
  r.status = RunStatus::Completed;
  r.steps = 100;
  r.initial_loss = 4.0;
  r.final_val = 5.0;  // worse than at init: capped
  r.val_curve = {{25, 3.9}, {50, 2.0}, {75, 1.0}, {100, 5.0}};
  EXPECT_DOUBLE_EQ(r.capped_final(), 4.0);
  EXPECT_EQ(r.first_step_at_or_below(2.0), 50);
  EXPECT_EQ(r.first_step_at_or_below(0.5), -1);
  EXPECT_DOUBLE_EQ(r.val_at_fraction(0.25), 3.9);
  EXPECT_DOUBLE_EQ(r.val_at_fraction(0.6), 2.0);  // the last evaluation before step 60
  EXPECT_DOUBLE_EQ(r.val_at_fraction(1.0), 4.0);  // capped at init
  EXPECT_TRUE(std::isnan(r.val_at_fraction(0.1)));
  r.status = RunStatus::Diverged;
  r.diverged_step = 55;
  r.final_val = NAN;
  EXPECT_DOUBLE_EQ(r.capped_final(), 4.0);
  EXPECT_DOUBLE_EQ(r.val_at_fraction(0.5), 2.0);  // before the divergence
  EXPECT_DOUBLE_EQ(r.val_at_fraction(0.75), 4.0);
}

TEST(XiongOutcomes, ArmSummaryPairsBySeed) {
  TrainingResults runs;
  Baseline base{"chance", 4.0, 2.0};
  for (const int seed : {1, 3}) {
    RunOutcome r;
    r.point = {"post", "layernorm", "adam", "1e-3", 1, seed};
    r.status = RunStatus::Completed;
    r.initial_loss = 4.0;
    r.final_val = seed == 1 ? 1.0 : 3.0;
    runs.add(r);
  }
  const ArmSummary s = summarize(runs, {"post", "layernorm", "adam", "1e-3", 1, 1}, {1, 2, 3}, base);
  EXPECT_EQ(s.n, 2);
  EXPECT_EQ(s.learned, 1);
  ASSERT_EQ(s.capped.size(), 3u);
  EXPECT_DOUBLE_EQ(s.capped[0], 1.0);
  EXPECT_TRUE(std::isnan(s.capped[1]));  // seed 2 missing: NaN keeps the pairing
  EXPECT_DOUBLE_EQ(s.capped[2], 3.0);
}

TEST(XiongOutcomes, UnigramCrossEntropyOfAKnownText) {
  // Training part "aaab" (val_fraction 0.2 of 5 chars keeps 1 char "a" for validation): counts with
  // add-one over the vocabulary {a, b}: a 3 + 1, b 1 + 1 -> p(a) = 4/6.
  EXPECT_NEAR(unigram_cross_entropy("aaaba", "char", 0.2), -std::log(4.0 / 6.0), 1e-12);
}

TEST(XiongReport, TablesEscapeCellsAndCheckRowLengths) {
  EXPECT_EQ(md_table({"a", "b"}, {{"1", "2"}}), "| a | b |\n|---|---|\n| 1 | 2 |\n");
  EXPECT_EQ(md_table({"a"}, {{"x|y"}}), "| a |\n|---|\n| x\\|y |\n");
  EXPECT_THROW(md_table({"a", "b"}, {{"1"}}), Error);
  EXPECT_EQ(mean_ci_text({}), "-");
  EXPECT_EQ(mean_ci_text({2.0}), "2");
}

// Every training point of both grids has a unique name and loads with the shipped TOML files.
TEST(XiongGrids, PointsAreUniqueAndTheirConfigsLoad) {
  const std::string dir = std::string(NORMLAB_SOURCE_DIR) + "/xiong/configs/";
  for (const bool quick : {true, false}) {
    const Grids g = make_grids(quick);
    EXPECT_FALSE(describe_grids(g).empty());
    load_config(dir + g.probe_config, g.probe_overrides);
    load_config(dir + g.amp_config);
    std::vector<TrainPoint> points = e3_points(g);
    for (const auto& more : {e4_points(g), e5_points(g), e6_points(g), e7_points(g)})
      points.insert(points.end(), more.begin(), more.end());
    std::set<std::string> names;
    for (const TrainPoint& p : points) {
      names.insert(p.name());
      EXPECT_NO_THROW(point_config(dir + g.copy_config, p)) << p.name();
    }
    EXPECT_GT(names.size(), 8u);
    if (!g.text_config.empty()) {
      for (const TrainPoint& p : e3_text_points(g)) EXPECT_NO_THROW(point_config(dir + g.text_config, p)) << p.name();
    }
  }
}

}  // namespace
}  // namespace normlab::xiong
