// Extending a finished run: `normlab train --resume DIR train.steps=N` continues it from its last
// checkpoint to N steps. With a schedule that does not depend on train.steps it is bit for bit the
// N-step run from scratch (the data stream, dropout and optimizer state come from the checkpoint);
// a schedule that decays to train.steps is refused unless --allow-schedule-change; any other
// override, a shorter N or a diverged run is refused naming the key.
#include <gtest/gtest.h>

#include <filesystem>

#include "command_util.h"
#include "config/config.h"
#include "dir_snapshot.h"
#include "optim/schedule.h"
#include "test_util.h"
#include "train/run_dir.h"
#include "train/trainer.h"
#include "trainer_test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using test::metrics_without_timing;
using test::quiet_options;
using test::read_summary;
using test::TinyRun;

TrainOptions extend_to(const fs::path& dir, int64_t steps, bool allow_schedule_change = false) {
  TrainOptions o = quiet_options(-1, dir.string());
  o.extend_to_steps = steps;
  o.allow_schedule_change = allow_schedule_change;
  return o;
}

std::string model_bytes(const fs::path& run) { return test::read_text(run / "checkpoint" / "model.safetensors"); }

TEST(ExtendRun, AConstantScheduleRunExtendedEqualsTheLongerRunFromScratch) {
  TinyRun t;  // 6 steps, every step logged, evaluations after updates 2, 4, 6
  const std::vector<std::string> common = {"model.dropout=0.1", "schedule.warmup_steps=2"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.end(), common.begin(), common.end());
    return t.config(more);
  };
  const TrainResult full = train(with({"train.name=full"}), quiet_options());
  const TrainResult short_run = train(with({"train.name=short", "train.steps=4"}), quiet_options());
  ASSERT_EQ(short_run.status, RunStatus::Completed);
  ASSERT_EQ(short_run.steps_done, 4);
  const TrainResult extended = train(RunConfig{}, extend_to(t.run("short"), 6));
  EXPECT_EQ(extended.status, RunStatus::Completed);
  EXPECT_EQ(extended.steps_done, 6);

  // The same records, each step once, and the same final weights, bit for bit.
  const auto m_full = metrics_without_timing(t.run("full")), m_ext = metrics_without_timing(t.run("short"));
  ASSERT_EQ(m_full.size(), 6u);
  ASSERT_EQ(m_ext.size(), m_full.size());
  for (size_t i = 0; i < m_full.size(); ++i) EXPECT_EQ(m_ext[i], m_full[i]) << "record " << i;
  EXPECT_EQ(model_bytes(t.run("short")), model_bytes(t.run("full")));
  const auto s_full = read_summary(t.run("full")), s_ext = read_summary(t.run("short"));
  for (const char* key : {"status", "steps_done", "steps", "final_train_loss", "final_val_loss", "best_val_loss"})
    EXPECT_EQ(s_ext[key], s_full[key]) << key;
  EXPECT_EQ(extended.final_val_loss, full.final_val_loss);
  // config.toml says 6 steps; fingerprint.txt is that config's, no longer the 4-step one's.
  const RunConfig saved = load_config((t.run("short") / "config.toml").string());
  EXPECT_EQ(saved.train.steps, 6);
  EXPECT_EQ(test::read_text(t.run("short") / "fingerprint.txt"), config_fingerprint(saved) + "\n");
  // A plain --resume now has nothing to do.
  EXPECT_EQ(train(RunConfig{}, quiet_options(-1, t.run("short").string())).steps_done, 6);
}

TEST(ExtendRun, AShorterRunOrADivergedOneIsRefusedChangingNothing) {
  TinyRun t;
  train(t.config({"train.name=done"}), quiet_options());
  const auto before = test::snapshot(t.run("done"));
  const std::string shorter = error_of([&] { train(RunConfig{}, extend_to(t.run("done"), 4)); });
  EXPECT_NE(shorter.find("[train] override 'train.steps=4': '" + t.run("done").string() + "' runs to train.steps = 6"),
            std::string::npos) << shorter;
  EXPECT_EQ(test::snapshot(t.run("done")), before);
  // Equal to its own length: a plain resume, nothing to do.
  EXPECT_EQ(train(RunConfig{}, extend_to(t.run("done"), 6)).steps_done, 6);
  EXPECT_EQ(test::snapshot(t.run("done")), before);

  train(t.config({"train.name=boom", "optim.lr=1e4", "train.divergence_loss=20"}), quiet_options());
  const auto boom_before = test::snapshot(t.run("boom"));
  const std::string diverged = error_of([&] { train(RunConfig{}, extend_to(t.run("boom"), 10)); });
  EXPECT_NE(diverged.find("override 'train.steps=10'"), std::string::npos) << diverged;
  EXPECT_NE(diverged.find("diverged at step"), std::string::npos) << diverged;
  EXPECT_EQ(test::snapshot(t.run("boom")), boom_before);
}

// Cosine decays to min_lr at train.steps: extending changes the rate of the steps to come, so it
// takes --allow-schedule-change, and the new steps then follow the longer schedule.
TEST(ExtendRun, AScheduleThatDecaysToTheEndNeedsAllowScheduleChange) {
  TinyRun t;
  train(t.config({"train.name=cos", "schedule.kind=cosine", "schedule.warmup_steps=2"}), quiet_options());
  const auto before = test::snapshot(t.run("cos"));
  const std::string refused = error_of([&] { train(RunConfig{}, extend_to(t.run("cos"), 10)); });
  EXPECT_NE(refused.find("schedule.kind 'cosine' decays to schedule.min_lr"), std::string::npos) << refused;
  EXPECT_NE(refused.find("--allow-schedule-change"), std::string::npos) << refused;
  EXPECT_EQ(test::snapshot(t.run("cos")), before);

  const TrainResult r = train(RunConfig{}, extend_to(t.run("cos"), 10, true));
  EXPECT_EQ(r.status, RunStatus::Completed);
  EXPECT_EQ(r.steps_done, 10);
  const auto metrics = read_metrics(t.run("cos") / "metrics.jsonl");
  ASSERT_EQ(metrics.size(), 10u);
  const RunConfig c = load_config((t.run("cos") / "config.toml").string());
  for (int64_t step : {5, 6, 9})  // step 5: the 6-step schedule's; 6 and 9: the 10-step one's
    EXPECT_DOUBLE_EQ(metrics[static_cast<size_t>(step)]["lr"].get<double>(),
                     learning_rate(c.schedule, c.optim.lr, step, step < 6 ? 6 : 10)) << step;
}

TEST(ExtendRun, TheCommandLineTakesOnlyTrainSteps) {
  TinyRun t;
  train(t.config({"train.name=run"}), quiet_options());
  const std::string dir = t.run("run").string();
  const auto other = test::run_command(test::kNormlab + " train --resume " + dir + " train.steps=8 optim.lr=1");
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find("override 'optim.lr=1' would change 'optim.lr'"), std::string::npos) << other.output;
  const auto with_config = test::run_command(test::kNormlab + " train " + t.config_path + " --resume " + dir);
  EXPECT_EQ(with_config.exit_code, 2) << with_config.output;
  const auto flag_alone = test::run_command(test::kNormlab + " train --resume " + dir + " --allow-schedule-change");
  EXPECT_EQ(flag_alone.exit_code, 2) << flag_alone.output;
  const auto bad_value = test::run_command(test::kNormlab + " train --resume " + dir + " train.steps=0");
  EXPECT_EQ(bad_value.exit_code, 1) << bad_value.output;
  EXPECT_NE(bad_value.output.find("steps must be >= 1, got 0"), std::string::npos) << bad_value.output;

  const auto extended = test::run_command(test::kNormlab + " train --resume " + dir + " train.steps=8 --quiet");
  EXPECT_EQ(extended.exit_code, 0) << extended.output;
  EXPECT_NE(extended.output.find("completed after 8 steps"), std::string::npos) << extended.output;
  EXPECT_EQ(read_summary(t.run("run"))["steps_done"], 8);
  EXPECT_EQ(read_metrics(t.run("run") / "metrics.jsonl").back()["step"], 8);  // updates count from 1
}

}  // namespace
}  // namespace normlab
