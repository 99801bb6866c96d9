// The trainer, in process on tiny configs: reproducibility, stop-and-resume bit for bit,
// divergence as a result, the grad_norms.csv layout, and the saved config.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "command_util.h"
#include "config/config.h"
#include "train/run_dir.h"
#include "train/trainer.h"
#include "nn/transformer.h"
#include "test_util.h"
#include "dir_snapshot.h"
#include "trainer_test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;
using test::TinyRun;
using test::metrics_without_timing;
using test::quiet_options;
using test::read_summary;

TEST(Trainer, SameConfigAndSeedGiveIdenticalLosses) {
  TinyRun t;
  const TrainOptions quiet = quiet_options();
  const TrainResult a = train(t.config({"train.name=a", "model.dropout=0.1"}), quiet);
  const TrainResult b = train(t.config({"train.name=b", "model.dropout=0.1"}), quiet);
  EXPECT_EQ(a.status, RunStatus::Completed);
  EXPECT_EQ(a.steps_done, 6);
  const auto ma = metrics_without_timing(t.run("a")), mb = metrics_without_timing(t.run("b"));
  ASSERT_EQ(ma.size(), 6u);  // log.every = 1
  EXPECT_EQ(ma, mb);         // every loss, lr and grad norm, bit for bit
  EXPECT_EQ(a.final_val_loss, b.final_val_loss);
  // A different seed gives different losses (the comparison above can fail).
  train(t.config({"train.name=c", "model.dropout=0.1", "train.seed=2", "model.seed=2"}), quiet);
  EXPECT_NE(metrics_without_timing(t.run("c")), ma);
}

TEST(Trainer, StoppedAndResumedRunMatchesTheUninterruptedOne) {
  TinyRun t;
  const std::vector<std::string> common = {"model.dropout=0.1", "schedule.kind=cosine", "schedule.warmup_steps=2"};
  auto with = [&](std::string name) {
    auto o = common;
    o.push_back("train.name=" + name);
    return t.config(o);
  };
  const TrainResult full = train(with("full"), quiet_options());
  const TrainResult part = train(with("part"), quiet_options(3));
  EXPECT_EQ(part.status, RunStatus::Stopped);
  EXPECT_EQ(part.steps_done, 3);
  EXPECT_EQ(read_summary(t.run("part"))["status"], "stopped");
  EXPECT_FALSE(is_completed_run(t.run("part")));
  const TrainResult resumed = train(RunConfig{}, quiet_options(-1, t.run("part").string()));
  EXPECT_EQ(resumed.status, RunStatus::Completed);
  EXPECT_EQ(resumed.steps_done, 6);

  // metrics.jsonl: the same records, each step once.
  const auto m_full = metrics_without_timing(t.run("full")), m_part = metrics_without_timing(t.run("part"));
  ASSERT_EQ(m_part.size(), m_full.size());
  for (size_t i = 0; i < m_full.size(); ++i) EXPECT_EQ(m_part[i], m_full[i]) << "record " << i;
  // grad_norms.csv: the same header and rows (updates 1, 2, 4 and the last, 6), bit for bit.
  const CsvTable g_full = read_csv(t.run("full") / "grad_norms.csv"), g_part = read_csv(t.run("part") / "grad_norms.csv");
  EXPECT_EQ(g_part.columns, g_full.columns);
  ASSERT_EQ(g_full.rows.size(), 4u);
  EXPECT_EQ(g_part.rows, g_full.rows);
  // The summary covers the whole run, including evaluations before the stop.
  const auto s_full = read_summary(t.run("full")), s_part = read_summary(t.run("part"));
  for (const char* key : {"status", "steps_done", "final_train_loss", "final_val_loss", "best_val_loss"})
    EXPECT_EQ(s_part[key], s_full[key]) << key;
  EXPECT_EQ(resumed.best_val_loss, full.best_val_loss);
}

TEST(Trainer, ResumedSummaryCountsEvaluationsBeforeTheStop) {
  TinyRun t;
  train(t.config({"train.name=p"}), quiet_options(3));
  // Make the evaluation before the stop (step 1) the best one by far.
  const fs::path metrics_path = t.run("p") / "metrics.jsonl";
  std::string text;
  for (nlohmann::json r : read_metrics(metrics_path)) {
    if (r.contains("val_loss")) r["val_loss"] = 1e-3;
    text += r.dump() + "\n";
  }
  std::ofstream(metrics_path) << text;
  const TrainResult r = train(RunConfig{}, quiet_options(-1, t.run("p").string()));
  EXPECT_EQ(r.best_val_loss, 1e-3);
  EXPECT_EQ(read_summary(t.run("p"))["best_val_loss"], 1e-3);
  EXPECT_NE(r.final_val_loss, 1e-3);  // the last evaluation is the resumed run's own
}

TEST(Trainer, ResumingACompletedRunChangesNothing) {
  TinyRun t;
  const TrainResult done = train(t.config({"train.name=d"}), quiet_options());
  const TrainResult again = train(RunConfig{}, quiet_options(-1, t.run("d").string()));
  EXPECT_EQ(again.status, RunStatus::Completed);
  EXPECT_EQ(again.steps_done, 6);
  EXPECT_EQ(again.final_train_loss, done.final_train_loss);
  EXPECT_EQ(again.final_val_loss, done.final_val_loss);
  std::ifstream state(t.run("d") / "checkpoint" / "trainer_state.json");
  EXPECT_EQ(nlohmann::json::parse(state)["step"], 6);  // the checkpoint still says where it is
  EXPECT_EQ(read_metrics(t.run("d") / "metrics.jsonl").size(), 6u);
}

// The default divergence rule (train.divergence_loss = 0): a loss above 1.5 ln V once the warmup is
// over (the Xiong suite's threshold; the suite counts it from step 100); an explicit train.divergence_loss is an absolute limit instead.
TEST(Trainer, DefaultDivergenceIsOneAndAHalfLnVAfterTheWarmup) {
  TinyRun t;  // the copy task, V = 8: 1.5 ln 8 = 3.119
  const TrainResult high = train(t.config({"train.name=high", "optim.lr=0.5", "train.steps=200"}), quiet_options());
  EXPECT_EQ(high.status, RunStatus::Diverged);
  EXPECT_NE(high.reason.find("exceeds 1.5 ln V = 3.119 after the warmup (V = 8"), std::string::npos) << high.reason;
  const TrainResult absolute =
      train(t.config({"train.name=absolute", "optim.lr=0.5", "train.steps=200", "train.divergence_loss=1e4"}),
            quiet_options());
  EXPECT_EQ(absolute.status, RunStatus::Completed);
  // During the warmup only a non-finite loss is a divergence, however high the loss goes.
  const TrainResult warm =
      train(t.config({"train.name=warm", "optim.lr=2", "train.steps=50", "schedule.warmup_steps=50"}), quiet_options());
  EXPECT_EQ(warm.status, RunStatus::Completed) << warm.reason;
  double highest = 0;
  for (const auto& r : read_metrics(t.run("warm") / "metrics.jsonl")) highest = std::max(highest, r["train_loss"].get<double>());
  EXPECT_GT(highest, 1.5 * std::log(8.0));
}

// The example: char_small at lr 0.5 used to end "completed" at loss 24 (chance 4.56).
TEST(Trainer, CharSmallAtLearningRateHalfDiverges) {
  TinyRun t;
  const RunConfig c = load_config(std::string(NORMLAB_SOURCE_DIR) + "/experiments/configs/char_small.toml",
                                  {"optim.lr=0.5", "train.steps=120", "train.threads=1",
                                   "train.out_dir=" + (t.dir.path() / "runs").string()});
  const TrainResult r = train(c, quiet_options());
  EXPECT_EQ(r.status, RunStatus::Diverged);
  EXPECT_NE(r.reason.find("1.5 ln V"), std::string::npos) << r.reason;
}

TEST(Trainer, DivergenceIsARecordedResult) {
  TinyRun t;
  const RunConfig c = t.config({"train.name=boom", "optim.lr=1e4", "train.divergence_loss=20"});
  TrainResult r;
  ASSERT_NO_THROW(r = train(c, quiet_options()));
  EXPECT_EQ(r.status, RunStatus::Diverged);
  EXPECT_FALSE(r.reason.empty());
  EXPECT_LT(r.steps_done, 6);
  const auto summary = read_summary(t.run("boom"));
  EXPECT_EQ(summary["status"], "diverged");
  EXPECT_EQ(summary["diverged_at_step"], r.steps_done + 1);  // the update that diverged, not applied
  EXPECT_EQ(summary["reason"], r.reason);
  EXPECT_TRUE(is_completed_run(t.run("boom")));  // a result: a sweep does not run it again
  // Every step up to the divergence is logged, the last record says why.
  const auto metrics = read_metrics(t.run("boom") / "metrics.jsonl");
  ASSERT_EQ(static_cast<int64_t>(metrics.size()), r.steps_done + 1);
  for (int64_t s = 0; s <= r.steps_done; ++s) EXPECT_EQ(metrics[s]["step"], s + 1);  // updates count from 1
  EXPECT_EQ(metrics.back()["diverged"], r.reason);
  // Losses never measured are null, not 0 (which would read as the best run of a sweep).
  double best_val = INFINITY;
  for (const auto& m : metrics)
    if (m.contains("val_loss")) best_val = std::min(best_val, m["val_loss"].get<double>());
  if (std::isinf(best_val)) {
    EXPECT_TRUE(summary["best_val_loss"].is_null()) << summary.dump();
    EXPECT_TRUE(std::isnan(r.best_val_loss));
  } else {
    EXPECT_EQ(summary["best_val_loss"], best_val);
  }
}

// log.grad_norm_every = 4 over 6 steps: update 1 (initialization), update 4 and the last (6), never skipped.
TEST(Trainer, GradNormsAreLoggedAtTheLastStep) {
  TinyRun t;
  train(t.config({"train.name=last", "log.grad_norm_every=4"}), quiet_options());
  std::vector<double> steps;
  for (const auto& row : read_csv(t.run("last") / "grad_norms.csv").rows) steps.push_back(row[0]);
  EXPECT_EQ(steps, (std::vector<double>{1, 4, 6}));
}

TEST(Trainer, GradNormsStartAtInitializationWithEveryParameterAndResidualRms) {
  TinyRun t;
  RunConfig c = t.config({"train.name=g"});
  train(c, quiet_options());
  const CsvTable table = read_csv(t.run("g") / "grad_norms.csv");
  ASSERT_FALSE(table.rows.empty());
  EXPECT_EQ(table.rows[0][0], 1.0);  // update 1: its gradient is the initialization's
  c.model.vocab_size = c.data.copy_vocab;
  TransformerLM model(c.model);
  for (const auto& [name, _] : model.named_parameters()) {
    const int col = table.column(name);
    ASSERT_GE(col, 0) << name;
    EXPECT_GT(table.rows[0][col], 0.0) << name << " got no gradient";
  }
  for (int64_t l = 0; l < c.model.n_layers; ++l) {
    EXPECT_GE(table.column("layer." + std::to_string(l)), 0);
    const int col = table.column("residual_rms." + std::to_string(l));
    ASSERT_GE(col, 0) << "residual_rms." << l;
    EXPECT_GT(table.rows[0][col], 0.0);
  }
  EXPECT_GE(table.column("global"), 0);
}

TEST(Trainer, SavedConfigReloadsToTheSameConfig) {
  TinyRun t;
  RunConfig c = t.config({"train.name=cfg", "model.norm_placement=post", "optim.lr=3e-3"});
  train(c, quiet_options());
  const RunConfig saved = load_config((t.run("cfg") / "config.toml").string());
  c.model.vocab_size = c.data.copy_vocab;  // the trainer takes the vocabulary from the data
  EXPECT_EQ(config_to_toml(saved), config_to_toml(c));
  EXPECT_EQ(saved.model.norm_placement, NormPlacement::Post);
  EXPECT_EQ(saved.optim.lr, 3e-3);
}

// `normlab train --resume` exits by the run's own train.fail_on_divergence (the CLI is given no
// config on resume; the trainer reports the resolved one): 3 when it is true, 0 when it is not.
// --resume of a finished run (completed, or diverged: a result) has nothing to do: it says so, exits
// as the run ended, and leaves every file as it was (summary.json was rewritten with tokens_per_s 0).
TEST(Trainer, ResumingAFinishedRunTouchesNothing) {
  TinyRun t;
  train(t.config({"train.name=done"}), quiet_options());
  train(t.config({"train.name=boom", "optim.lr=0.5", "train.steps=200"}), quiet_options());
  for (const char* name : {"done", "boom"}) {
    const auto before = test::snapshot(t.run(name));
    const auto summary_time = fs::last_write_time(t.run(name) / "summary.json");
    const auto r = test::run_command(test::kNormlab + " train --resume " + t.run(name).string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("nothing to do, its files are left as they are"), std::string::npos) << r.output;
    EXPECT_EQ(test::snapshot(t.run(name)), before) << name;
    EXPECT_EQ(fs::last_write_time(t.run(name) / "summary.json"), summary_time) << name;
  }
}

TEST(Trainer, AResumedRunThatDivergesExitsByItsOwnFailOnDivergence) {
  TinyRun t;
  for (const bool strict : {true, false}) {
    const std::string name = strict ? "strict" : "lenient";
    // Stopped before its first step; its first step on resume diverges (loss ~ ln 8 > 0.5).
    train(t.config({"train.name=" + name, fmt::format("train.fail_on_divergence={}", strict),
                    "train.divergence_loss=0.5"}),
          quiet_options(0));
    const auto r = test::run_command(test::kNormlab + " train --resume " + t.run(name).string() + " --quiet");
    EXPECT_EQ(r.exit_code, strict ? 3 : 0) << r.output;
    EXPECT_NE(r.output.find("diverged at step 0"), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace normlab
