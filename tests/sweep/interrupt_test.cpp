// Ctrl-C and a scheduler's SIGTERM during `normlab train` (train/stop_signals.h): the run finishes
// its step, checkpoints, writes summary.json with status "interrupted", prints the command that
// continues it and exits 128 + the signal; that command then ends bit-identical to a run that was
// never interrupted.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "spawn_util.h"
#include "sweep/exit_codes.h"
#include "train/checkpoint.h"
#include "trainer_test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;

// Lines in the run's metrics.jsonl so far (0 before it exists).
size_t metric_lines(const fs::path& run) {
  std::ifstream in(run / "metrics.jsonl");
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const std::vector<std::string> kRunArgs = {"train.steps=4000", "log.eval_every=500", "log.grad_norm_every=1000",
                                           "--quiet"};

// A scratch directory with the tiny config, and the uninterrupted reference run "full" in it.
fs::path prepare(const std::string& tag) {
  const fs::path dir = fs::temp_directory_path() / ("normlab_interrupt_" + tag);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "cfg.toml") << test::tiny_config_toml(dir.string());
  std::string command = test::kNormlab + " train " + (dir / "cfg.toml").string() + " train.name=full";
  for (const std::string& a : kRunArgs) command += " " + a;
  const test::CommandResult full = test::run_command(command);
  EXPECT_EQ(full.exit_code, exit_codes::kDone) << full.output;
  return dir;
}

// Starts run `name` of the tiny config in the background, logging to DIR/<name>.log.
pid_t start_run(const fs::path& dir, const std::string& name, const std::vector<std::string>& env = {}) {
  std::vector<std::string> args = {"train", (dir / "cfg.toml").string(), "train.name=" + name};
  args.insert(args.end(), kRunArgs.begin(), kRunArgs.end());
  return test::spawn_normlab(args, (dir / (name + ".log")).string(), env);
}

// Waits until `run` has logged `lines` metrics records (or 60 s passed).
void wait_for_lines(const fs::path& run, size_t lines) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (metric_lines(run) < lines && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// `--resume` of DIR/cut ends as the reference run DIR/full, record for record.
void expect_resume_matches_full(const fs::path& dir) {
  const test::CommandResult resumed = test::run_command(test::kNormlab + " train --resume " + (dir / "cut").string() +
                                                        " --quiet");
  ASSERT_EQ(resumed.exit_code, exit_codes::kDone) << resumed.output;
  const auto m_cut = test::metrics_without_timing(dir / "cut"), m_full = test::metrics_without_timing(dir / "full");
  ASSERT_EQ(m_cut.size(), m_full.size());
  for (size_t i = 0; i < m_full.size(); ++i) ASSERT_EQ(m_cut[i], m_full[i]) << "record " << i;
  const nlohmann::json s_cut = test::read_summary(dir / "cut"), s_full = test::read_summary(dir / "full");
  for (const char* key : {"status", "steps_done", "final_train_loss", "final_val_loss", "best_val_loss"})
    EXPECT_EQ(s_cut[key], s_full[key]) << key;
}

// Signals a run after a random number of logged steps (the seed is printed), then resumes it.
void interrupt_then_resume(int signal) {
  const unsigned seed = std::random_device{}();
  std::printf("seed %u\n", seed);
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  const size_t after_lines = std::uniform_int_distribution<size_t>(5, 1500)(rng);
  const fs::path dir = prepare(std::to_string(signal));
  const pid_t pid = start_run(dir, "cut");
  ASSERT_GT(pid, 0);
  wait_for_lines(dir / "cut", after_lines);
  ASSERT_EQ(::kill(pid, signal), 0);
  const test::ProcessEnd end = test::wait_at_most(pid, 120);
  const std::string log = read_text(dir / "cut.log");
  ASSERT_EQ(end.exit_code, exit_codes::kSignalBase + signal) << log;
  const nlohmann::json summary = test::read_summary(dir / "cut");
  EXPECT_EQ(summary["status"], "interrupted") << log;
  const int64_t done = summary["steps_done"].get<int64_t>();
  EXPECT_GT(done, 0);
  EXPECT_LT(done, 4000) << "the signal came too late to test anything: " << log;
  EXPECT_NE(log.find("normlab train --resume " + (dir / "cut").string()), std::string::npos) << log;
  EXPECT_FALSE(is_completed_run(dir / "cut"));
  ASSERT_TRUE(fs::is_symlink(dir / "cut" / "checkpoint")) << "no checkpoint: " << log;
  const fs::path generation = fs::read_symlink(dir / "cut" / "checkpoint");  // checkpoints/step-N.XXXXXX
  EXPECT_EQ(generation.filename().string().rfind(fmt::format("step-{:08d}.", done), 0), 0u) << generation;
  const auto metrics = test::metrics_without_timing(dir / "cut");
  ASSERT_FALSE(metrics.empty());
  EXPECT_LE(metrics.back()["step"].get<int64_t>(), done) << "a step logged that the checkpoint does not hold";
  expect_resume_matches_full(dir);
}

TEST(Interrupt, SigintCheckpointsSaysHowToResumeAndResumesBitIdentical) { interrupt_then_resume(SIGINT); }

TEST(Interrupt, SigtermLikewise) { interrupt_then_resume(SIGTERM); }

// A second signal ends the process at once (by the signal, or 130 if the first one's checkpoint
// was already written); whatever it left, --resume ends bit-identical to the uninterrupted run.
TEST(Interrupt, ASecondSignalStopsAtOnceAndTheRunStaysResumable) {
  const fs::path dir = prepare("twice");
  const pid_t pid = start_run(dir, "cut");
  ASSERT_GT(pid, 0);
  wait_for_lines(dir / "cut", 200);
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  const test::ProcessEnd end = test::wait_at_most(pid, 120);
  EXPECT_TRUE(end.signal == SIGINT || end.exit_code == exit_codes::kSignalBase + SIGINT) << read_text(dir / "cut.log");
  expect_resume_matches_full(dir);
}

// Killed (SIGKILL) before its first checkpoint: --resume starts it again from step 0 instead of
// refusing, and a fresh `train` into the directory names that resume.
TEST(Interrupt, ResumeOfARunWithoutACheckpointStartsItAgain) {
  const fs::path dir = prepare("nocheckpoint");
  const pid_t pid = start_run(dir, "cut", {"NORMLAB_FAULT_RANK=0@50"});
  ASSERT_GT(pid, 0);
  const test::ProcessEnd end = test::wait_at_most(pid, 120);
  ASSERT_EQ(end.signal, SIGKILL) << read_text(dir / "cut.log");
  ASSERT_FALSE(fs::exists(fs::symlink_status(dir / "cut" / "checkpoint")));
  ASSERT_GT(metric_lines(dir / "cut"), 0u);
  const test::CommandResult again = test::run_command(test::kNormlab + " train " + (dir / "cfg.toml").string() +
                                                      " train.name=cut");
  EXPECT_EQ(again.exit_code, exit_codes::kFailed) << again.output;
  EXPECT_NE(again.output.find("or from step 0 if it has none"), std::string::npos) << again.output;
  const test::CommandResult resumed = test::run_command(test::kNormlab + " train --resume " + (dir / "cut").string() +
                                                        " --quiet");
  EXPECT_NE(resumed.output.find("has no checkpoint (it stopped before its first one): starting it again from step 0"),
            std::string::npos) << resumed.output;
  ASSERT_EQ(resumed.exit_code, exit_codes::kDone) << resumed.output;
  EXPECT_EQ(test::metrics_without_timing(dir / "cut"), test::metrics_without_timing(dir / "full"));
}

// The checkpoint cadence: every train.checkpoint_every steps, and whenever the wall time since the
// last checkpoint reached the bound (600 s by default), so a kill -9 loses at most that much.
TEST(Interrupt, CheckpointCadenceByStepsAndByWallTime) {
  EXPECT_TRUE(checkpoint_due(10, 5, 0.0, 600.0));
  EXPECT_FALSE(checkpoint_due(11, 5, 599.0, 600.0));
  EXPECT_TRUE(checkpoint_due(11, 5, 600.0, 600.0));
  EXPECT_TRUE(checkpoint_due(7, 0, 601.0, 600.0));
  EXPECT_FALSE(checkpoint_due(7, 0, 1.0, 600.0));
  EXPECT_EQ(TrainOptions{}.checkpoint_seconds, 600.0);
}

}  // namespace
}  // namespace normlab
