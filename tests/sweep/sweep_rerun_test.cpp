// Rerunning a sweep: a point is reused only when its run was made with the same config (its
// fingerprint); an interrupted point is resumed or started over; a point or a sweep directory
// that another process is writing is left alone.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "config/config.h"
#include "io/directory_lock.h"
#include "train/run_dir.h"
#include "dir_snapshot.h"
#include "sweep_test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using test::read_text;
using test::snapshot;
using test::TinySweep;

// run_sweep with its stderr captured.
std::vector<SweepRow> sweep_saying(const SweepOptions& options, const std::vector<SweepPoint>& points,
                                   std::string& said) {
  testing::internal::CaptureStderr();
  std::vector<SweepRow> rows;
  try {
    rows = run_sweep(options, points);
  } catch (...) {
    said = testing::internal::GetCapturedStderr();
    throw;
  }
  said = testing::internal::GetCapturedStderr();
  return rows;
}

int64_t summary_steps(const std::string& run_dir) {
  return nlohmann::json::parse(read_text(fs::path(run_dir) / run_files::kSummary))["steps_done"].get<int64_t>();
}

TEST(SweepRerun, PointWithAnotherConfigRunsAgainAndSaysSo) {
  TinySweep s;
  const auto points = expand_grid(parse_sweep_axes({"optim.lr=1e-2,2e-2"}));
  const std::vector<SweepRow> first = run_sweep(s.options(), points);
  for (const SweepRow& row : first) {
    ASSERT_EQ(row.status, RunStatus::Completed) << row.error;
    std::vector<std::string> overrides = s.options().fixed_overrides;
    for (const std::string& o : point_override_texts(row.point)) overrides.push_back(o);
    EXPECT_EQ(row.fingerprint, config_fingerprint(load_config(s.config, overrides)));
    EXPECT_EQ(read_text(fs::path(row.run_dir) / run_files::kFingerprint), row.fingerprint + "\n");
  }
  EXPECT_EQ(read_sweep_csv(fs::path(s.options().out_dir) / "sweep.csv")[1].fingerprint, first[1].fingerprint);

  // Other threads do not change what a run computes: reused.
  SweepOptions threads = s.options();
  threads.threads_per_run = 2;
  for (const SweepRow& row : run_sweep(threads, points)) EXPECT_TRUE(row.skipped) << row.point.name;

  // Another value of a fixed override: every point runs again, and the sweep says why.
  SweepOptions longer = s.options();
  longer.fixed_overrides.push_back("train.steps=4");
  std::string said;
  const std::vector<SweepRow> second = sweep_saying(longer, points, said);
  for (size_t i = 0; i < second.size(); ++i) {
    SCOPED_TRACE(second[i].point.name);
    EXPECT_FALSE(second[i].skipped);
    EXPECT_EQ(second[i].status, RunStatus::Completed) << second[i].error;
    EXPECT_NE(second[i].fingerprint, first[i].fingerprint);
    EXPECT_EQ(summary_steps(second[i].run_dir), 4);
    EXPECT_EQ(read_metrics(fs::path(second[i].run_dir) / run_files::kMetrics).back()["step"], 4);  // no old records
    EXPECT_NE(said.find("point '" + second[i].point.name + "' was run with another config (fingerprint " +
                        first[i].fingerprint + ", now " + second[i].fingerprint + ")"),
              std::string::npos) << said;
  }
}

TEST(SweepRerun, InterruptedPointIsResumedOrStartedOver) {
  TinySweep s;
  SweepOptions options = s.options();
  options.fixed_overrides.push_back("train.checkpoint_every=2");
  const auto points = expand_grid(parse_sweep_axes({"optim.lr=1e-2"}));
  const SweepRow done = run_sweep(options, points)[0];
  ASSERT_EQ(done.status, RunStatus::Completed) << done.error;
  const fs::path run = done.run_dir;
  std::string said;

  fs::remove(run / run_files::kSummary);  // interrupted after its last checkpoint
  SweepRow again = sweep_saying(options, points, said)[0];
  EXPECT_NE(said.find("point 'lr=1e-2' was interrupted: resuming it from its checkpoint"), std::string::npos) << said;
  EXPECT_EQ(again.status, RunStatus::Completed) << again.error;
  EXPECT_EQ(again.final_val_loss, done.final_val_loss);

  // A checkpoint that cannot be loaded: resuming fails, and the sweep starts the point over.
  fs::remove(run / run_files::kSummary);
  for (const auto& entry : fs::recursive_directory_iterator(run / "checkpoint"))
    if (entry.is_regular_file()) std::ofstream(entry.path(), std::ios::trunc) << "damaged";
  again = sweep_saying(options, points, said)[0];
  EXPECT_NE(said.find("resuming point 'lr=1e-2' failed"), std::string::npos) << said;
  EXPECT_NE(said.find("starting it over"), std::string::npos) << said;
  EXPECT_EQ(again.status, RunStatus::Completed) << again.error;
  EXPECT_EQ(again.final_val_loss, done.final_val_loss);  // same config, same seed: same result

  // No checkpoint at all: started over.
  fs::remove(run / run_files::kSummary);
  fs::remove_all(run / "checkpoint");
  again = sweep_saying(options, points, said)[0];
  EXPECT_NE(said.find("point 'lr=1e-2' was interrupted before its first checkpoint: starting it over"),
            std::string::npos) << said;
  EXPECT_EQ(again.status, RunStatus::Completed) << again.error;
  EXPECT_EQ(again.final_val_loss, done.final_val_loss);
}

TEST(SweepRerun, PointThatAnotherProcessWritesIsReportedAndLeftAlone) {
  TinySweep s;
  const auto points = expand_grid(parse_sweep_axes({"optim.lr=1e-2,2e-2"}));
  const std::vector<SweepRow> first = run_sweep(s.options(), points);
  fs::remove(fs::path(first[0].run_dir) / run_files::kSummary);  // so that the sweep would run it
  const auto before = snapshot(first[0].run_dir);
  const DirectoryLock other_writer(first[0].run_dir, "test");
  std::string said;
  const std::vector<SweepRow> rows = sweep_saying(s.options(), points, said);
  EXPECT_EQ(rows[0].status, RunStatus::Failed);
  EXPECT_NE(rows[0].error.find("'" + first[0].run_dir + "' is in use: another normlab process (pid " +
                               std::to_string(::getpid()) + ")"), std::string::npos) << rows[0].error;
  EXPECT_TRUE(rows[1].skipped);
  EXPECT_EQ(snapshot(first[0].run_dir), before);
}

TEST(SweepRerun, SecondSweepInTheSameDirectoryIsRefused) {
  TinySweep s;
  fs::create_directories(s.options().out_dir);
  const DirectoryLock other_sweep(s.options().out_dir, "test");
  const std::string message = error_of([&] { run_sweep(s.options(), expand_grid({})); });
  EXPECT_NE(message.find("[sweep] '" + s.options().out_dir + "' is in use"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(fs::path(s.options().out_dir) / "base"));
}

// A damaged summary.json is read as "no summary", never as a JSON type error.
TEST(SweepRerun, DamagedSummaryFieldsAreNotJsonTypeErrors) {
  TinySweep s;
  const auto points = expand_grid(parse_sweep_axes({"optim.lr=1e-2"}));
  const SweepRow done = run_sweep(s.options(), points)[0];
  std::ofstream(fs::path(done.run_dir) / run_files::kSummary, std::ios::trunc)
      << R"({"status": "diverged", "diverged_at_step": "seven", "wall_s": "slow"})";
  const SweepRow again = run_sweep(s.options(), points)[0];
  EXPECT_TRUE(again.skipped);
  EXPECT_EQ(again.status, RunStatus::Diverged);
  EXPECT_EQ(again.diverged_step, -1);
  std::ofstream(fs::path(done.run_dir) / run_files::kSummary, std::ios::trunc) << R"({"status": 5})";
  EXPECT_TRUE(is_completed_run(done.run_dir));  // not "stopped": a result, not a crash
}

}  // namespace
}  // namespace normlab
