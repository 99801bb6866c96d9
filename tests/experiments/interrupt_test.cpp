// Ctrl-C and a scheduler's SIGTERM during `normlab train` (train/stop_signals.h): the run finishes
// its step, checkpoints, writes summary.json with status "interrupted", prints the command that
// continues it and exits 128 + the signal; that command then ends bit-identical to a run that was
// never interrupted.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "spawn_util.h"
#include "sweep/exit_codes.h"
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

void interrupt_then_resume(int signal, size_t after_lines) {
  const fs::path dir = fs::temp_directory_path() / ("normlab_interrupt_" + std::to_string(signal));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "cfg.toml") << test::tiny_config_toml(dir.string());
  const std::vector<std::string> args = {"train", (dir / "cfg.toml").string(), "train.steps=4000", "log.eval_every=500",
                                         "log.grad_norm_every=1000", "--quiet"};
  auto with_name = [&](const std::string& name) {
    std::vector<std::string> a = args;
    a.push_back("train.name=" + name);
    return a;
  };
  const pid_t pid = test::spawn_normlab(with_name("cut"), (dir / "cut.log").string());
  ASSERT_GT(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (metric_lines(dir / "cut") < after_lines && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
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

  const test::CommandResult resumed = test::run_command(test::kNormlab + " train --resume " + (dir / "cut").string() +
                                                        " --quiet");
  ASSERT_EQ(resumed.exit_code, exit_codes::kDone) << resumed.output;
  const test::CommandResult full = test::run_command(test::kNormlab + " train " + (dir / "cfg.toml").string() +
                                                     " train.steps=4000 log.eval_every=500 log.grad_norm_every=1000"
                                                     " train.name=full --quiet");
  ASSERT_EQ(full.exit_code, exit_codes::kDone) << full.output;
  const auto m_cut = test::metrics_without_timing(dir / "cut"), m_full = test::metrics_without_timing(dir / "full");
  ASSERT_EQ(m_cut.size(), m_full.size());
  for (size_t i = 0; i < m_full.size(); ++i) ASSERT_EQ(m_cut[i], m_full[i]) << "record " << i;
  const nlohmann::json s_cut = test::read_summary(dir / "cut"), s_full = test::read_summary(dir / "full");
  for (const char* key : {"status", "steps_done", "final_train_loss", "final_val_loss", "best_val_loss"})
    EXPECT_EQ(s_cut[key], s_full[key]) << key;
}

TEST(Interrupt, SigintCheckpointsSaysHowToResumeAndResumesBitIdentical) { interrupt_then_resume(SIGINT, 300); }

TEST(Interrupt, SigtermLikewise) { interrupt_then_resume(SIGTERM, 1200); }

}  // namespace
}  // namespace normlab
