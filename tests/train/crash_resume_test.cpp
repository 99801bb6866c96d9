// Crash safety of checkpoints (issue 12, finding 1), SQLite style: a run with checkpoint_every = 1
// is killed (SIGKILL) at random moments, killed at every file-system step of its checkpoint writer,
// and made to hit a full disk (ENOSPC) at every such step; each time `--resume` continues, and the
// finished run is bit-identical to an uninterrupted one. The faults come from the test hook in
// io/fault_injection.h (NORMLAB_FAULT_INJECT).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <regex>

#include "checkpoint_test_util.h"
#include "event_file_util.h"
#include "config/config.h"
#include "config/toml_codec.h"
#include "train/run_dir.h"
#include "spawn_util.h"
#include "test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using test::file_bytes;

// Width 32, two layers, a checkpoint after every step: writing a checkpoint (three files, fsync'ed)
// takes much of each step, so random kills often land inside one.
std::string crash_config(const std::string& out_dir, int steps) {
  return "[model]\nd_model = 32\nn_heads = 2\nn_layers = 2\nd_ff = 64\ncontext_length = 8\n"
         "[optim]\nname = \"adamw\"\nlr = 1e-2\nweight_decay = 0.1\n"
         "[data]\nsource = \"copy\"\ncopy_length = 4\ncopy_vocab = 16\n"
         "[train]\nname = \"ref\"\nout_dir = " + toml_quote(out_dir) + "\nsteps = " + std::to_string(steps) +
         "\nbatch_size = 4\ncontext = 8\nthreads = 1\ncheckpoint_every = 1\n"
         "[log]\nevery = 1\neval_every = 5\neval_batches = 1\ngrad_norm_every = 3\ntensorboard = true\n";
}

class CrashRun {
 public:
  explicit CrashRun(int steps) : config_(dir_.write("crash.toml", crash_config(dir_.file("runs"), steps))) {
    const auto t0 = std::chrono::steady_clock::now();
    const test::ProcessEnd end = test::wait_at_most(start(reference(), {}), 300);
    EXPECT_EQ(end.exit_code, 0) << log();
    reference_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  fs::path reference() const { return dir_.path() / "runs" / "ref"; }
  fs::path victim() const { return dir_.path() / "runs" / "victim"; }
  double reference_seconds() const { return reference_seconds_; }
  std::string log() const { return file_bytes(dir_.file("run.log")); }

  // Starts the run `run`: resumed when it has a checkpoint, else (never started, or killed before
  // its first checkpoint) from scratch in an emptied directory.
  pid_t start(const fs::path& run, const std::vector<std::string>& env) const {
    std::vector<std::string> args = {"train", "--quiet"};
    if (fs::exists(fs::symlink_status(run / "checkpoint"))) {
      args.insert(args.end(), {"--resume", run.string()});
    } else {
      fs::remove_all(run);
      args.insert(args.end(), {config_, "train.name=" + run.filename().string()});
    }
    return test::spawn_normlab(args, dir_.file("run.log"), env);
  }
  // Runs `run` to its end without faults; false (and a test failure) if that fails.
  bool finish(const fs::path& run) const {
    const test::ProcessEnd end = test::wait_at_most(start(run, {}), 300);
    EXPECT_EQ(end.exit_code, 0) << log();
    return end.exit_code == 0;
  }

 private:
  test::ScratchDir dir_;
  std::string config_;
  double reference_seconds_ = 0;
};

// What a killed writer can leave: temporary files or links, a generation the link does not name.
int leftovers(const fs::path& run) {
  int count = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(run, error))
    count += entry.path().filename().string().find(".tmp.") != std::string::npos;
  for (const auto& entry : fs::directory_iterator(run / "checkpoints", error))
    count += fs::read_symlink(run / "checkpoint", error) != fs::path("checkpoints") / entry.path().filename();
  return count;
}

std::vector<nlohmann::json> metrics_without_timing(const fs::path& run) {
  std::vector<nlohmann::json> records = read_metrics(run / "metrics.jsonl");
  for (auto& r : records) r.erase("tokens_per_s");
  return records;
}

// Bit for bit: the checkpoint files, every metric but the timing, the gradient norms, the outcome;
// the TensorBoard events (log.tensorboard) at the same steps, none lost or repeated.
void expect_same_run(const fs::path& got, const fs::path& want, const std::string& context) {
  for (const char* file : {"model.safetensors", "optimizer.safetensors", "trainer_state.json", "manifest.json"})
    EXPECT_EQ(file_bytes(test::checkpoint_file(got, file)), file_bytes(test::checkpoint_file(want, file)))
        << context << ": " << file;
  EXPECT_EQ(metrics_without_timing(got), metrics_without_timing(want)) << context;
  EXPECT_EQ(file_bytes(got / "grad_norms.csv"), file_bytes(want / "grad_norms.csv")) << context;
  EXPECT_EQ(test::run_event_steps(got), test::run_event_steps(want)) << context;  // no step lost or repeated
  const auto summary = [](const fs::path& run) { return nlohmann::json::parse(file_bytes(run / "summary.json")); };
  for (const char* key : {"status", "steps_done", "final_train_loss", "final_val_loss", "best_val_loss"})
    EXPECT_EQ(summary(got)[key], summary(want)[key]) << context << ": " << key;
  EXPECT_EQ(leftovers(got), 0) << context;
}

TEST(CrashResume, RandomKillsThenResumeEndBitIdentical) {
  const CrashRun t(36);
  const char* seed_text = std::getenv("NORMLAB_CRASH_SEED");
  const unsigned seed = seed_text ? static_cast<unsigned>(std::atoi(seed_text)) : std::random_device{}();
  std::mt19937 rng(seed);
  // Kill moments uniform over a fifth of an uninterrupted run: about five kills per run's worth.
  std::uniform_real_distribution<double> delay_s(0.0, t.reference_seconds() / 5);
  int kills = 0, partial = 0, finished = 0;
  while (kills < 20) {
    partial += leftovers(t.victim()) > 0;
    const pid_t pid = t.start(t.victim(), {});
    std::this_thread::sleep_for(std::chrono::duration<double>(delay_s(rng)));
    ::kill(pid, SIGKILL);
    const test::ProcessEnd end = test::wait_at_most(pid, 300);
    if (end.signal == SIGKILL) {
      ++kills;
      continue;
    }
    // It finished before the kill: it must match, and a fresh victim takes the remaining kills.
    ASSERT_EQ(end.exit_code, 0) << t.log();
    expect_same_run(t.victim(), t.reference(), fmt::format("seed {}, after {} kills", seed, kills));
    fs::remove_all(t.victim());
    ++finished;
  }
  ASSERT_TRUE(t.finish(t.victim()));
  expect_same_run(t.victim(), t.reference(), fmt::format("seed {}, after {} kills", seed, kills));
  std::printf("seed %u: %d kills (%d left a partial checkpoint behind), %d runs finished in between\n", seed,
              kills, partial, finished);
}

struct FileSystemStep {
  std::string what, path;  // "write", "fsync", "rename", ...; the file or directory
};

// The numbered file-system steps of an uninterrupted run, from the trace mode of the hook.
std::vector<FileSystemStep> traced_steps(const CrashRun& t) {
  const pid_t pid = t.start(t.victim(), {"NORMLAB_FAULT_INJECT=trace"});
  EXPECT_EQ(test::wait_at_most(pid, 300).exit_code, 0) << t.log();
  fs::remove_all(t.victim());
  std::vector<FileSystemStep> steps;
  const std::string log = t.log();
  const std::regex line("fault point \\d+: (\\S+) (\\S+)");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), line); it != std::sregex_iterator(); ++it)
    steps.push_back({(*it)[1], (*it)[2]});
  return steps;
}

TEST(CrashResume, KillAtEveryFileSystemStepThenResumeEndsBitIdentical) {
  const CrashRun t(2);
  const std::vector<FileSystemStep> steps = traced_steps(t);
  ASSERT_GT(steps.size(), 30u);  // two checkpoints' files, fsyncs, renames, the link switch
  for (size_t n = 1; n <= steps.size(); ++n) {
    const std::string context = fmt::format("killed at step {} of {} ({} {})", n, steps.size(), steps[n - 1].what,
                                            steps[n - 1].path);
    const test::ProcessEnd end =
        test::wait_at_most(t.start(t.victim(), {fmt::format("NORMLAB_FAULT_INJECT=kill@{}", n)}), 300);
    EXPECT_EQ(end.signal, SIGKILL) << context << ": " << t.log();
    if (!t.finish(t.victim())) break;
    expect_same_run(t.victim(), t.reference(), context);
    fs::remove_all(t.victim());
  }
}

TEST(CrashResume, DiskFullAtEveryFileSystemStepIsAClearErrorThenResumeEndsBitIdentical) {
  const CrashRun t(2);
  const std::vector<FileSystemStep> steps = traced_steps(t);
  ASSERT_GT(steps.size(), 30u);
  for (size_t n = 1; n <= steps.size(); ++n) {
    const FileSystemStep& step = steps[n - 1];
    const std::string context = fmt::format("ENOSPC at step {} of {} ({} {})", n, steps.size(), step.what, step.path);
    const test::ProcessEnd end =
        test::wait_at_most(t.start(t.victim(), {fmt::format("NORMLAB_FAULT_INJECT=enospc@{}", n)}), 300);
    const std::string log = t.log();
    // Removing the previous generation may fail (a leftover, not an error), and so may making a
    // link switch durable (an error; the previous generation is kept): otherwise a failed save
    // takes what it wrote with it, so that a full disk gets its space back.
    const bool after_switch = n >= 2 && steps[n - 2].what == "rename" && steps[n - 2].path.ends_with("/checkpoint");
    if (step.what == "remove") {
      EXPECT_EQ(end.exit_code, 0) << context << ": " << log;
    } else {
      EXPECT_EQ(end.exit_code, 1) << context << ": " << log;
      EXPECT_NE(log.find("No space left on device"), std::string::npos) << context << ": " << log;
      if (!after_switch) {
        EXPECT_EQ(leftovers(t.victim()), 0) << context;
      }
    }
    if (!t.finish(t.victim())) break;
    expect_same_run(t.victim(), t.reference(), context);
    fs::remove_all(t.victim());
  }
}

}  // namespace
}  // namespace normlab
