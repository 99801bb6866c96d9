// Running a sweep: each point's `normlab train` command, whether a point is skipped, resumed or
// run (again) from its fingerprint, the child processes and the stop signals, and sweep.csv
// rewritten after every finished run.
#include <unistd.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <fstream>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "sweep/child_process.h"
#include "config/config.h"
#include "config/toml_codec.h"
#include "io/shell_words.h"
#include "sweep/exit_codes.h"
#include "sweep/progress_line.h"
#include "train/run_dir.h"
#include "sweep/sweep.h"

namespace fs = std::filesystem;

namespace normlab {

namespace {

// The sweep's points run this very program through /proc/self/exe, which the kernel keeps
// pointing at the running binary's file even after a rebuild replaces it on disk: a sweep (or a
// reproduce suite) runs every point with the code it started with.
std::string own_executable() { return "/proc/self/exe"; }
bool own_executable_is_cli = false;  // declare_normlab_cli()

// A command as a user can paste it: the binary by its real path (not /proc/self/exe, which would
// be the shell's own), each word shell-quoted.
std::string pasteable(std::vector<std::string> argv) {
  if (!argv.empty() && argv[0] == own_executable()) argv[0] = own_executable_path();
  return shell_command(argv);
}

double number_or_nan(const nlohmann::json& summary, const char* key) {
  const auto it = summary.find(key);
  return it != summary.end() && it->is_number() ? it->get<double>() : std::nan("");
}

// Each run of a point starts its log's lines with this and the command line.
constexpr const char* kAttemptMarker = "[sweep] $ ";

// The last few non-empty lines of the latest run in a child's log, on one line (for sweep.csv
// and messages); of a progress line rewritten with '\r', the last version.
std::string log_tail(const fs::path& log, size_t max_lines = 4) {
  std::ifstream in(log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(kAttemptMarker, 0) == 0) lines.clear();
    line = line.substr(line.rfind('\r') == std::string::npos ? 0 : line.rfind('\r') + 1);
    if (line.find_first_not_of(" \t") != std::string::npos) lines.push_back(line);
  }
  const size_t first = lines.size() > max_lines ? lines.size() - max_lines : 0;
  std::string tail;
  for (size_t i = first; i < lines.size(); ++i) tail += (tail.empty() ? "" : " | ") + lines[i];
  if (tail.size() > 600) tail = fmt::format("...{}", tail.substr(tail.size() - 600));
  return tail;
}

// Fills a row from its run's summary.json; false if there is no usable summary.
bool read_summary_into(SweepRow& row) {
  std::ifstream in(fs::path(row.run_dir) / run_files::kSummary);
  if (!in) return false;
  const nlohmann::json summary = nlohmann::json::parse(in, nullptr, false);
  if (!summary.is_object() || !summary.contains("status") || !summary["status"].is_string()) return false;
  const std::optional<RunStatus> status = parse_enum<RunStatus>(summary["status"].get<std::string>());
  if (!status || !has_result(*status)) return false;
  row.status = *status;
  const auto step = summary.find("diverged_at_step");
  row.diverged_step = *status == RunStatus::Diverged && step != summary.end() && step->is_number_integer()
                          ? step->get<int64_t>() : -1;
  row.final_train_loss = number_or_nan(summary, "final_train_loss");
  row.final_val_loss = number_or_nan(summary, "final_val_loss");
  row.best_val_loss = number_or_nan(summary, "best_val_loss");
  row.wall_seconds = number_or_nan(summary, "wall_s");
  return true;
}

std::string format_loss(double v) { return std::isfinite(v) ? fmt::format("{:.4f}", v) : "-"; }

fs::path point_log(const fs::path& out_dir, const SweepPoint& point) {
  return out_dir / "logs" / (point.name + ".txt");
}

void print_progress(size_t done, size_t total, const SweepRow& row, const fs::path& log) {
  std::string what;
  if (row.status == RunStatus::Completed)
    what = fmt::format("completed, train {} val {} ({:.1f} s)", format_loss(row.final_train_loss),
                       format_loss(row.final_val_loss), row.wall_seconds);
  else if (row.status == RunStatus::Diverged)
    what = fmt::format("diverged at step {} ({:.1f} s)", row.diverged_step, row.wall_seconds);
  else
    what = fmt::format("FAILED: {} (log: {})", row.error, log.string());
  fmt::print("[{}/{}] {}: {}\n", done, total, row.point.name, what);
  std::fflush(stdout);
}

// How a point is started (or not: skip, busy), and what the sweep says about it on stderr.
enum class Start { skip, busy, fresh, resume, overwrite };
struct PointPlan {
  Start start;
  std::string note;
};

std::string stored_fingerprint(const fs::path& run_dir) {
  std::ifstream in(run_dir / run_files::kFingerprint);
  std::string text;
  in >> text;
  return text;
}

// A completed point is reused only when its fingerprint is the one this sweep asks for; an
// unfinished one is resumed from its checkpoint (or started over); any other is run again.
PointPlan plan_point(SweepRow& row) {
  const fs::path dir = row.run_dir;
  const std::string& name = row.point.name;
  if (!fs::exists(dir)) return {Start::fresh, ""};
  if (const auto pid = DirectoryLock::holder(dir))
    return {Start::busy, fmt::format("point '{}': '{}' is in use: another normlab process (pid {}) is writing it",
                                     name, dir.string(), *pid)};
  const std::string stored = stored_fingerprint(dir);
  if (stored.empty() && !fs::exists(dir / run_files::kConfig)) return {Start::overwrite, ""};  // nothing ran
  if (stored.empty())
    return {Start::overwrite, fmt::format("point '{}' holds a run without {} (an older normlab?): running it "
                                          "again", name, run_files::kFingerprint)};
  if (stored != row.fingerprint)
    return {Start::overwrite, fmt::format("point '{}' was run with another config (fingerprint {}, now {}): "
                                          "running it again, its earlier results are replaced", name, stored,
                                          row.fingerprint)};
  if (is_completed_run(dir) && read_summary_into(row)) return {Start::skip, ""};
  if (fs::exists(dir / "checkpoint"))
    return {Start::resume, fmt::format("point '{}' was interrupted: resuming it from its checkpoint", name)};
  return {Start::overwrite, fmt::format("point '{}' was interrupted before its first checkpoint: starting it "
                                        "over", name)};
}

// Every point's `normlab train` command line and config fingerprint, each checked with
// load_config before anything runs.
struct PointCommand {
  std::vector<std::string> argv;
  std::string fingerprint;
};

std::vector<PointCommand> point_commands(const SweepOptions& options, const std::vector<SweepPoint>& points,
                                         const std::string& binary) {
  const int threads = options.threads_per_run > 0 ? options.threads_per_run : (options.jobs > 1 ? 1 : 0);
  std::vector<PointCommand> commands;
  std::set<std::string> names;
  for (const SweepPoint& point : points) {
    NL_CHECK(names.insert(point.name).second, "sweep", "two points are named '{}'", point.name);
    std::vector<std::string> overrides = options.fixed_overrides;
    for (std::string& text : point_override_texts(point)) overrides.push_back(std::move(text));
    overrides.push_back("train.out_dir=" + toml_quote(options.out_dir));
    overrides.push_back("train.name=" + toml_quote(point.name));
    if (threads > 0) overrides.push_back(fmt::format("train.threads={}", threads));
    PointCommand command;
    try {
      command.fingerprint = config_fingerprint(load_config(options.config_path, overrides));
    } catch (const Error& e) {
      fail("sweep", "point '{}': {}", point.name, e.what());
    }
    command.argv = {binary, "train", options.config_path};
    command.argv.insert(command.argv.end(), overrides.begin(), overrides.end());
    command.argv.push_back("--quiet");
    commands.push_back(std::move(command));
  }
  return commands;
}

// Runs the queued points, `jobs` at a time, until all are done or a stop signal arrives.
class SweepRunner {
 public:
  SweepRunner(const SweepOptions& options, const std::vector<PointCommand>& commands, std::vector<SweepRow>& rows)
      : options_(options), commands_(commands), rows_(rows), out_dir_(options.out_dir) {}

  void queue(size_t i, Start start) { queue_.push_back({i, start}); }
  size_t queued() const { return queue_.size(); }

  void run(size_t already_done) {
    done_ = already_done;
    // On a terminal: points done, rate and ETA on one line of stderr (nothing in logs and pipes).
    progress_.emplace("sweep " + out_dir_.filename().string(), "runs", static_cast<int64_t>(rows_.size()),
                      static_cast<int64_t>(already_done), !options_.quiet && stderr_is_terminal());
    StopSignals signals;
    while (!queue_.empty() || !running_.empty()) {
      if (signals.received() != 0) interrupt(signals);
      while (!queue_.empty() && static_cast<int>(running_.size()) < options_.jobs) {
        const Job job = queue_.front();
        queue_.pop_front();
        start(job);
      }
      if (!reap_finished()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      progress_->update(static_cast<int64_t>(done_), fmt::format("{} running", running_.size()));
    }
    progress_->clear();
  }

  // Children still running when the runner is left by an exception are stopped, not left behind.
  ~SweepRunner() {
    for (const Job& job : running_) ::kill(job.pid, SIGTERM);
    for (const Job& job : running_) ::waitpid(job.pid, nullptr, 0);
  }

 private:
  struct Job {
    size_t index;
    Start start;
    pid_t pid = -1;
  };

  std::vector<std::string> argv_of(const Job& job) const {
    const std::vector<std::string>& argv = commands_[job.index].argv;
    if (job.start == Start::resume) return {argv[0], "train", "--resume", rows_[job.index].run_dir, "--quiet"};
    std::vector<std::string> out = argv;
    if (job.start == Start::overwrite) out.push_back("--overwrite");
    return out;
  }

  void start(Job job) {
    const std::vector<std::string> argv = argv_of(job);
    const fs::path log = point_log(out_dir_, rows_[job.index].point);
    std::ofstream(log, std::ios::app) << fmt::format("\n{}{}\n", kAttemptMarker, pasteable(argv));
    std::string error;
    job.pid = spawn_child(argv, log, error);
    if (job.pid < 0) finish(job, error);
    else running_.push_back(job);
  }

  // Reaps the children that have ended; false if none had.
  bool reap_finished() {
    bool reaped = false;
    for (size_t k = 0; k < running_.size();) {
      int status = 0;
      const pid_t r = ::waitpid(running_[k].pid, &status, WNOHANG);
      if (r == 0 || (r < 0 && errno == EINTR)) {
        ++k;
        continue;
      }
      const Job job = running_[k];
      running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(k));
      reaped = true;
      // A resume that ends in an error (a checkpoint that cannot be loaded, say) is run again from step 0.
      const bool start_over = job.start == Start::resume && r > 0 && WIFEXITED(status) &&
                              WEXITSTATUS(status) == exit_codes::kFailed;
      finish(job, r < 0 ? fmt::format("waitpid failed: {}", std::strerror(errno)) : failure_of(job, status), start_over);
    }
    return reaped;
  }

  // "" for success. A non-zero exit is a failure, except train.fail_on_divergence's exit after a
  // divergence it recorded: a diverged run is a result.
  std::string failure_of(const Job& job, int status) const {
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
    SweepRow probe = rows_[job.index];
    if (WIFEXITED(status) && read_summary_into(probe) && probe.status == RunStatus::Diverged) return "";
    return describe_wait_status(status);
  }

  void finish(const Job& job, const std::string& failure, bool start_over = false) {
    SweepRow& row = rows_[job.index];
    const fs::path log = point_log(out_dir_, row.point);
    if (failure.empty() && read_summary_into(row)) {
      row.error.clear();
    } else if (start_over) {
      fmt::print(stderr, "sweep: resuming point '{}' failed ({}): starting it over\n", row.point.name,
                 log_tail(log, 1));
      queue_.push_front({job.index, Start::overwrite});
      return;
    } else {
      row.status = RunStatus::Failed;
      const std::string tail = log_tail(log);
      row.error = failure.empty() ? "no summary.json" : failure;
      if (!tail.empty()) row.error += ": " + tail;
    }
    write_sweep_results(out_dir_, rows_);
    if (progress_) progress_->clear();
    if (!options_.quiet) print_progress(++done_, rows_.size(), row, log);
  }

  // Forwards the signal to the running children, waits for them, records them as interrupted
  // (status pending: the next sweep resumes them) and throws Interrupted.
  [[noreturn]] void interrupt(const StopSignals& signals) {
    const int signal = signals.received();
    std::vector<pid_t> pids;
    for (const Job& job : running_) pids.push_back(job.pid);
    stop_children(pids, signal, signals);
    for (const Job& job : running_)
      rows_[job.index].error = fmt::format("interrupted by signal {} ({})", signal, strsignal(signal));
    if (progress_) progress_->clear();
    const size_t stopped = running_.size();
    running_.clear();
    write_sweep_results(out_dir_, rows_);
    const std::string again = options_.command_line.empty() ? "" : ":\n  " + options_.command_line;
    throw Interrupted(signal, fmt::format("[sweep] interrupted by signal {} ({}): stopped {} running point(s) ({}); "
                                          "run the same sweep again to resume it{}", signal, strsignal(signal),
                                          stopped, (out_dir_ / "sweep.csv").string(), again));
  }

  const SweepOptions& options_;
  const std::vector<PointCommand>& commands_;
  std::vector<SweepRow>& rows_;
  fs::path out_dir_;
  std::deque<Job> queue_;
  std::vector<Job> running_;
  size_t done_ = 0;
  std::optional<ProgressLine> progress_;  // the terminal line, from run() on
};

}  // namespace

void declare_normlab_cli() { own_executable_is_cli = true; }

std::vector<SweepRow> run_sweep(const SweepOptions& options, const std::vector<SweepPoint>& points) {
  NL_CHECK(!options.out_dir.empty(), "sweep", "out_dir must be given");
  NL_CHECK(options.jobs >= 1, "sweep", "jobs must be >= 1, got {}", options.jobs);
  NL_CHECK(options.threads_per_run >= 0, "sweep", "threads_per_run must be >= 0, got {}", options.threads_per_run);
  // Another program (a test) started as `PROGRAM train ...` would run itself again, sweeping again.
  NL_CHECK(!options.normlab_binary.empty() || own_executable_is_cli, "sweep",
           "this program is not the normlab command line: set normlab_binary to the CLI that runs the points");
  const std::string binary = options.normlab_binary.empty() ? own_executable() : options.normlab_binary;
  NL_CHECK(::access(binary.c_str(), X_OK) == 0, "sweep", "cannot run '{}': {}", binary, std::strerror(errno));
  const std::vector<PointCommand> commands = point_commands(options, points, binary);

  const fs::path out_dir = options.out_dir;
  std::error_code error;
  fs::create_directories(out_dir / "logs", error);
  NL_CHECK(!error, "sweep", "cannot create '{}': {}", (out_dir / "logs").string(), error.message());
  const DirectoryLock lock(out_dir, "sweep");  // one sweep at a time in a sweep directory

  std::vector<SweepRow> rows(points.size());
  SweepRunner runner(options, commands, rows);
  for (size_t i = 0; i < points.size(); ++i) {
    rows[i].point = points[i];
    rows[i].run_dir = (out_dir / points[i].name).string();
    rows[i].fingerprint = commands[i].fingerprint;
    rows[i].status = RunStatus::Pending;
    const PointPlan plan = plan_point(rows[i]);
    if (!plan.note.empty()) fmt::print(stderr, "sweep: {}\n", plan.note);
    if (plan.start == Start::skip) {
      rows[i].skipped = true;
    } else if (plan.start == Start::busy) {  // its writer's lock would stop a child anyway
      rows[i].status = RunStatus::Failed;
      rows[i].error = plan.note;
    } else {
      runner.queue(i, plan.start);
    }
  }
  write_sweep_results(out_dir, rows);
  const size_t skipped = static_cast<size_t>(std::count_if(rows.begin(), rows.end(), [](const SweepRow& r) { return r.skipped; }));
  if (!options.quiet && skipped > 0)
    fmt::print("{} of {} points already completed in {} with the same config: skipped\n", skipped, points.size(),
               out_dir.string());
  runner.run(points.size() - runner.queued());
  return rows;
}

}  // namespace normlab
