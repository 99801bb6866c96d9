// A sweep stopped from outside: SIGTERM reaches its runs and the sweep waits for them; SIGKILL,
// which it cannot forward, still leaves no run behind (each run dies with its parent).
#include <gtest/gtest.h>

#include <filesystem>

#include "io/directory_lock.h"
#include "process_util.h"
#include "sweep_test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using test::TinySweep;

// A sweep of three runs that would train for hours, two at a time, started in the background;
// returns once both first runs are training (their metrics.jsonl exists), with their pids.
struct SlowSweep {
  TinySweep s;
  std::string out = s.dir.file("slow");
  pid_t sweep = -1;
  std::vector<pid_t> runs;
  test::KillAtExit cleanup;

  void start() {
    sweep = test::spawn_background({test::kNormlab, "sweep", s.config, "optim.lr=1e-2,2e-2,3e-2", "--set",
                                    "train.steps=100000000", "--jobs", "2", "--out", out, "--quiet"},
                                   s.dir.file("sweep.log"));
    ASSERT_GT(sweep, 0);
    cleanup.pids.push_back(sweep);
    const bool training = test::wait_until([&] {
      return fs::exists(fs::path(out) / "lr=1e-2" / "metrics.jsonl") && fs::exists(fs::path(out) / "lr=2e-2" / "metrics.jsonl");
    }, 120);
    ASSERT_TRUE(training) << "the runs did not start; sweep log: " << sweep_log();
    runs = test::children_of(sweep);
    cleanup.pids.insert(cleanup.pids.end(), runs.begin(), runs.end());
    ASSERT_EQ(runs.size(), 2u) << sweep_log();
  }
  std::string sweep_log() const {
    std::ifstream in(s.dir.file("sweep.log"));
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
};

TEST(SweepSignals, SigtermIsForwardedToTheRunsAndTheSweepExitsAfterThem) {
  SlowSweep slow;
  ASSERT_NO_FATAL_FAILURE(slow.start());
  ASSERT_EQ(::kill(slow.sweep, SIGTERM), 0);
  const int status = test::wait_or_kill(slow.sweep, 60);
  ASSERT_TRUE(WIFEXITED(status)) << "the sweep did not exit by itself (status " << status << ")";
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM) << slow.sweep_log();
  EXPECT_NE(slow.sweep_log().find("interrupted by signal 15"), std::string::npos) << slow.sweep_log();
  // ... and says how to resume it, as a command to paste (the binary by its real path).
  const std::string again = fs::canonical(test::kNormlab).string() + " sweep " + slow.s.config +
                            " optim.lr=1e-2,2e-2,3e-2 --set train.steps=100000000 --out " + slow.out + " --jobs 2 --quiet";
  EXPECT_NE(slow.sweep_log().find("run the same sweep again to resume it:\n  " + again), std::string::npos)
      << slow.sweep_log();
  for (const pid_t run : slow.runs) {
    // Reaped by the sweep before it exited: the pid is gone, not even a zombie.
    EXPECT_TRUE(test::stat_fields(run).empty()) << "run " << run << " outlived the sweep";
  }
  // The stopped points stay pending, to be resumed by the next sweep.
  const auto rows = read_sweep_csv(fs::path(slow.out) / "sweep.csv");
  ASSERT_EQ(rows.size(), 3u);
  for (const SweepRow& row : rows) EXPECT_EQ(row.status, RunStatus::Pending);
  EXPECT_NE(rows[0].error.find("interrupted by signal 15"), std::string::npos) << rows[0].error;
}

TEST(SweepSignals, RunsDieWithASweepKilledOutright) {
  SlowSweep slow;
  ASSERT_NO_FATAL_FAILURE(slow.start());
  ASSERT_EQ(::kill(slow.sweep, SIGKILL), 0);
  test::wait_or_kill(slow.sweep, 60);
  for (const pid_t run : slow.runs)
    EXPECT_TRUE(test::wait_until([&] { return test::has_ended(run); }, 30)) << "run " << run << " outlived the sweep";
  for (const char* point : {"lr=1e-2", "lr=2e-2"})  // nobody holds their locks any more
    EXPECT_FALSE(DirectoryLock::holder(fs::path(slow.out) / point).has_value()) << point;
}

}  // namespace
}  // namespace normlab
