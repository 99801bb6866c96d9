// One writer per run directory, and a fresh run that never reuses an earlier run's directory:
// the lock, what a second writer gets (in process and through the normlab binary), --overwrite.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "command_util.h"
#include "dir_snapshot.h"
#include "config/config.h"
#include "train/run_dir.h"
#include "train/trainer.h"
#include "process_util.h"
#include "test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using test::ScratchDir;
using test::snapshot;

const std::string kOurPid = std::to_string(::getpid());

TEST(DirectoryLock, SecondWriterIsRefusedWithTheHoldersPidUntilTheFirstIsGone) {
  ScratchDir dir;
  EXPECT_FALSE(DirectoryLock::holder(dir.path()).has_value());
  {
    const DirectoryLock lock(dir.path(), "run_dir");
    EXPECT_EQ(DirectoryLock::holder(dir.path()), ::getpid());
    const std::string message = error_of([&] { DirectoryLock second(dir.path(), "run_dir"); });
    EXPECT_EQ(message, "[run_dir] '" + dir.path().string() + "' is in use: another normlab process (pid " + kOurPid +
                           ") is writing it; wait for it to finish or stop it");
  }
  EXPECT_FALSE(DirectoryLock::holder(dir.path()).has_value());
  EXPECT_NO_THROW(DirectoryLock(dir.path(), "run_dir"));
}

TEST(RunDir, EveryModeTakesTheLockBeforeTouchingAnything) {
  ScratchDir dir;
  const fs::path run = prepare_run_dir(dir.file("runs"), "a", RunDirMode::fresh).path;
  dir.write("runs/a/metrics.jsonl", "{\"step\": 0}\n");
  const DirectoryLock other(run, "test");
  for (const RunDirMode mode : {RunDirMode::fresh, RunDirMode::overwrite, RunDirMode::resume}) {
    const std::string message = error_of([&] { prepare_run_dir(dir.file("runs"), "a", mode); });
    EXPECT_NE(message.find("is in use: another normlab process (pid " + kOurPid + ")"), std::string::npos) << message;
    EXPECT_EQ(test::read_text(run / "metrics.jsonl"), "{\"step\": 0}\n");
  }
}

TEST(RunDir, OverwriteEmptiesOnlyDirectoriesNormlabWrote) {
  ScratchDir dir;
  dir.write("outside.txt", "keep");
  // Someone else's directory: refused in every mode, and left as it was (no lock file either).
  fs::create_directories(dir.path() / "runs" / "mine");
  dir.write("runs/mine/notes.txt", "mine");
  for (const RunDirMode mode : {RunDirMode::fresh, RunDirMode::overwrite}) {
    const std::string message = error_of([&] { prepare_run_dir(dir.file("runs"), "mine", mode); });
    EXPECT_NE(message.find("is not empty (notes.txt) and is not a normlab run directory"), std::string::npos) << message;
  }
  EXPECT_FALSE(fs::exists(dir.path() / "runs" / "mine" / kLockFile));
  // A run directory: emptied, the lock file aside; a link is removed, not followed.
  const fs::path run = prepare_run_dir(dir.file("runs"), "a", RunDirMode::fresh).path;
  dir.write("runs/a/summary.json", "{\"status\": \"completed\"}");
  fs::create_directories(run / "checkpoint");
  dir.write("runs/a/checkpoint/model.safetensors", "weights");
  fs::create_symlink(dir.path() / "outside.txt", run / "link");
  EXPECT_NO_THROW(prepare_run_dir(dir.file("runs"), "a", RunDirMode::overwrite));
  EXPECT_EQ(std::vector<fs::path>(fs::directory_iterator(run), fs::directory_iterator()),
            std::vector<fs::path>{run / kLockFile});
  EXPECT_EQ(test::read_text(dir.path() / "outside.txt"), "keep");
  // A run from before the lock file existed is recognised by the header of its config.toml.
  fs::create_directories(dir.path() / "runs" / "old");
  dir.write("runs/old/config.toml", config_to_toml(RunConfig{}));
  EXPECT_NO_THROW(prepare_run_dir(dir.file("runs"), "old", RunDirMode::overwrite));
  EXPECT_FALSE(fs::exists(dir.path() / "runs" / "old" / "config.toml"));
}

struct TinyCli {
  ScratchDir dir;
  std::string config = dir.write("tiny.toml", test::tiny_config_toml(dir.file("runs")));
  fs::path run = dir.path() / "runs" / "tiny";
  test::CommandResult train(const std::string& arguments) const {
    return test::run_command(test::kNormlab + " train " + arguments + " --quiet");
  }
};

// Finding 2: two `train` runs with the same name. The second exits 1 naming the directory and the
// first one's pid, and writes nothing: the first run's metrics stay whole.
TEST(RunDirWriters, SecondTrainWithTheSameNameExitsAndTheFirstRunsOn) {
  TinyCli t;
  test::KillAtExit cleanup;
  const pid_t first = test::spawn_background({test::kNormlab, "train", t.config, "train.steps=100000000", "--quiet"},
                                             t.dir.file("first.log"));
  ASSERT_GT(first, 0);
  cleanup.pids.push_back(first);
  ASSERT_TRUE(test::wait_until([&] { return fs::exists(t.run / "metrics.jsonl"); }, 60));
  const auto second = t.train(t.config + " train.steps=6");
  EXPECT_EQ(second.exit_code, 1) << second.output;
  EXPECT_NE(second.output.find("'" + t.run.string() + "' is in use: another normlab process (pid " +
                               std::to_string(first) + ")"), std::string::npos) << second.output;
  EXPECT_FALSE(test::has_ended(first));
  ::kill(first, SIGKILL);
  test::wait_or_kill(first, 30);
  // Every line the first run wrote is a record of its own (updates 1, 2, 3, ... once each).
  const auto records = read_metrics(t.run / "metrics.jsonl");
  ASSERT_FALSE(records.empty());
  for (size_t i = 0; i < records.size(); ++i) EXPECT_EQ(records[i]["step"], static_cast<int64_t>(i) + 1);
  EXPECT_EQ(test::read_text(t.run / "config.toml").find("steps = 6\n"), std::string::npos);
}

// Finding 2 through every command that writes a run directory: a held lock stops each of them
// before it writes or truncates anything.
TEST(RunDirWriters, HeldLockStopsTrainOverwriteAndResume) {
  TinyCli t;
  ASSERT_EQ(t.train(t.config).exit_code, 0);
  const auto before = snapshot(t.run);
  const DirectoryLock held(t.run, "test");
  for (const std::string& arguments : {t.config, t.config + " --overwrite", "--resume " + t.run.string()}) {
    SCOPED_TRACE(arguments);
    const auto r = t.train(arguments);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("is in use: another normlab process (pid " + kOurPid + ")"), std::string::npos) << r.output;
    EXPECT_EQ(snapshot(t.run), before);
  }
}

// Finding 3: a fresh run into the directory of an interrupted one is refused (the old checkpoint
// would otherwise stay and a later --resume continue the old run); --overwrite starts over.
TEST(RunDirWriters, FreshRunRefusesAnUnfinishedRunAndOverwriteStartsOver) {
  TinyCli t;
  TrainOptions stop_early;
  stop_early.quiet = true;
  stop_early.stop_after = 3;
  ASSERT_EQ(train(load_config(t.config), stop_early).status, RunStatus::Stopped);
  const auto before = snapshot(t.run);

  const auto refused = t.train(t.config + " optim.lr=5e-3");
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("'" + t.run.string() + "' already holds an unfinished run"), std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("--resume " + t.run.string()), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("--overwrite"), std::string::npos) << refused.output;
  EXPECT_EQ(snapshot(t.run), before);

  const auto over = t.train(t.config + " optim.lr=5e-3 --overwrite");
  ASSERT_EQ(over.exit_code, 0) << over.output;
  EXPECT_EQ(load_config((t.run / "config.toml").string()).optim.lr, 5e-3);
  // Nothing of the old run is left: the files equal those of a run made fresh elsewhere.
  ASSERT_EQ(t.train(t.config + " optim.lr=5e-3 train.name=elsewhere").exit_code, 0);
  const auto metrics = [](const fs::path& run) {
    std::vector<nlohmann::json> records = read_metrics(run / "metrics.jsonl");
    for (auto& r : records) r.erase("tokens_per_s");
    return records;
  };
  EXPECT_EQ(metrics(t.run), metrics(t.run.parent_path() / "elsewhere"));
  EXPECT_EQ(test::read_text(t.run / "grad_norms.csv"), test::read_text(t.run.parent_path() / "elsewhere" / "grad_norms.csv"));
  const auto resumed = t.train("--resume " + t.run.string());  // continues the new run (complete: nothing to do)
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_EQ(metrics(t.run), metrics(t.run.parent_path() / "elsewhere"));
}

}  // namespace
}  // namespace normlab
