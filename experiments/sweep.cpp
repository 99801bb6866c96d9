// Sweeps: axis parsing, the grid and its point names, and running the points as child
// `normlab train` processes (sweep_csv.cpp writes and reads sweep.csv).
#include "experiments/sweep.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "experiments/config.h"
#include "experiments/run_dir.h"

extern char** environ;

namespace fs = std::filesystem;

namespace normlab {

namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// Splits "v1,v2,..." at commas outside double quotes ("\"a,b\",c" has two values).
std::vector<std::string> split_values(const std::string& text, const std::string& argument) {
  std::vector<std::string> values;
  std::string current;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '"' && (i == 0 || text[i - 1] != '\\')) quoted = !quoted;
    if (ch == ',' && !quoted) {
      values.push_back(trim(current));
      current.clear();
    } else {
      current += ch;
    }
  }
  NL_CHECK(!quoted, "sweep", "axis '{}': unterminated '\"'", argument);
  values.push_back(trim(current));
  return values;
}

// The text of a value inside a directory name: quotes dropped, unsafe characters replaced.
std::string name_safe(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    if (ch == '"' || ch == '\'') continue;
    const bool safe = std::isalnum(static_cast<unsigned char>(ch)) || std::strchr("._=,+-", ch) != nullptr;
    out += safe ? ch : '_';
  }
  return out.empty() ? "_" : out;
}

// File systems limit a name to 255 bytes: a long name keeps its start and gets a hash of the rest.
std::string limit_length(const std::string& name) {
  if (name.size() <= 200) return name;
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (const char ch : name) hash = (hash ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
  return fmt::format("{}-{:016x}", name.substr(0, 180), hash);
}

// A TOML basic string holding `text` (paths and names passed to the child as overrides).
std::string toml_quote(const std::string& text) {
  std::string out = "\"";
  for (const char ch : text) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (static_cast<unsigned char>(ch) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(ch));
      continue;
    }
    out += ch;
  }
  return out + "\"";
}

std::string own_executable() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  NL_CHECK(!error, "sweep", "cannot find this program's path (/proc/self/exe): {}", error.message());
  return self.string();
}

double number_or_nan(const nlohmann::json& summary, const char* key) {
  const auto it = summary.find(key);
  return it != summary.end() && it->is_number() ? it->get<double>() : std::nan("");
}

// The last few non-empty lines of a child's log, on one line (for sweep.csv and messages).
std::string log_tail(const fs::path& log, size_t max_lines = 4) {
  std::ifstream in(log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    line = trim(line.substr(line.rfind('\r') == std::string::npos ? 0 : line.rfind('\r') + 1));
    if (!line.empty()) lines.push_back(line);
  }
  const size_t first = lines.size() > max_lines ? lines.size() - max_lines : 0;
  std::string tail;
  for (size_t i = first; i < lines.size(); ++i) {
    if (!tail.empty()) tail += " | ";
    tail += lines[i];
  }
  if (tail.size() > 600) tail = fmt::format("...{}", tail.substr(tail.size() - 600));
  return tail;
}

// Fills a row from its run's summary.json; false if there is no usable summary.
bool read_summary_into(SweepRow& row) {
  std::ifstream in(fs::path(row.run_dir) / run_files::kSummary);
  if (!in) return false;
  const nlohmann::json summary = nlohmann::json::parse(in, nullptr, false);
  if (!summary.is_object()) return false;
  const std::string status = summary.value("status", "");
  if (status != "completed" && status != "diverged") return false;
  row.status = status;
  row.diverged_step = status == "diverged" && summary.contains("diverged_at_step")
                          ? summary["diverged_at_step"].get<int64_t>() : -1;
  row.final_train_loss = number_or_nan(summary, "final_train_loss");
  row.final_val_loss = number_or_nan(summary, "final_val_loss");
  row.best_val_loss = number_or_nan(summary, "best_val_loss");
  row.wall_seconds = number_or_nan(summary, "wall_s");
  return true;
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exit code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return fmt::format("wait status {}", status);
}

// Spawns `argv` with stdout and stderr to `log` and stdin from /dev/null; returns the pid, or
// -1 with `error` set.
pid_t spawn_logged(const std::vector<std::string>& argv, const fs::path& log, std::string& error) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    error = fmt::format("cannot start '{}': {}", argv[0], std::strerror(rc));
    return -1;
  }
  return pid;
}

// Children still running when run_sweep throws are stopped and reaped, not left behind.
struct RunningChildren {
  std::vector<std::pair<pid_t, size_t>> list;  // (pid, row index)
  ~RunningChildren() {
    for (const auto& [pid, _] : list) ::kill(pid, SIGTERM);
    for (const auto& [pid, _] : list) ::waitpid(pid, nullptr, 0);
  }
};

std::string format_loss(double v) { return std::isfinite(v) ? fmt::format("{:.4f}", v) : "-"; }

void print_progress(size_t done, size_t total, const SweepRow& row) {
  std::string what;
  if (row.status == "completed")
    what = fmt::format("completed, train {} val {} ({:.1f} s)", format_loss(row.final_train_loss),
                       format_loss(row.final_val_loss), row.wall_seconds);
  else if (row.status == "diverged")
    what = fmt::format("diverged at step {} ({:.1f} s)", row.diverged_step, row.wall_seconds);
  else
    what = fmt::format("FAILED: {} (log: {})", row.error, (fs::path(row.run_dir) / "log.txt").string());
  fmt::print("[{}/{}] {}: {}\n", done, total, row.point.name, what);
  std::fflush(stdout);
}

}  // namespace

std::vector<SweepAxis> parse_sweep_axes(const std::vector<std::string>& arguments) {
  std::vector<SweepAxis> axes;
  std::set<std::string> config_keys;  // "seed" counts as train.seed and model.seed
  for (const std::string& argument : arguments) {
    const size_t eq = argument.find('=');
    const std::string key = eq == std::string::npos ? "" : trim(argument.substr(0, eq));
    NL_CHECK(!key.empty(), "sweep", "axis '{}': expected key=v1,v2,... (e.g. optim.lr=1e-3,3e-4)", argument);
    NL_CHECK(key == "seed" || key == "preset" || key.find('.') != std::string::npos, "sweep",
             "axis '{}': the key must be section.key, preset or seed, got '{}'", argument, key);
    NL_CHECK(key != "train.name" && key != "train.out_dir", "sweep",
             "axis '{}': the sweep sets train.name and train.out_dir of each run itself", argument);
    SweepAxis axis{key, split_values(argument.substr(eq + 1), argument)};
    std::set<std::string> seen;
    for (size_t i = 0; i < axis.values.size(); ++i) {
      NL_CHECK(!axis.values[i].empty(), "sweep", "axis '{}': value {} is empty", argument, i + 1);
      NL_CHECK(seen.insert(axis.values[i]).second, "sweep", "axis '{}': value '{}' is given twice", argument,
               axis.values[i]);
    }
    const std::vector<std::string> covered =
        key == "seed" ? std::vector<std::string>{"train.seed", "model.seed"} : std::vector<std::string>{key};
    for (const std::string& k : covered)
      NL_CHECK(config_keys.insert(k).second, "sweep", "axis '{}': '{}' is already swept by another axis",
               argument, k);
    axes.push_back(std::move(axis));
  }
  return axes;
}

std::vector<SweepPoint> expand_grid(const std::vector<SweepAxis>& axes) {
  // Name labels: the key's last part ("lr"), or the whole key where two axes share that part.
  std::vector<std::string> labels;
  for (const SweepAxis& axis : axes) {
    NL_CHECK(!axis.values.empty(), "sweep", "axis '{}' has no values", axis.key);
    labels.push_back(axis.key.substr(axis.key.rfind('.') + 1));
  }
  const std::vector<std::string> endings = labels;
  for (size_t i = 0; i < axes.size(); ++i)
    if (std::count(endings.begin(), endings.end(), endings[i]) > 1) labels[i] = axes[i].key;

  std::vector<SweepPoint> points;
  std::vector<size_t> index(axes.size(), 0);  // an odometer, last axis fastest
  std::set<std::string> names;
  while (true) {
    SweepPoint point;
    std::string name;
    for (size_t a = 0; a < axes.size(); ++a) {
      point.overrides.emplace_back(axes[a].key, axes[a].values[index[a]]);
      if (a > 0) name += ',';
      name += fmt::format("{}={}", name_safe(labels[a]), name_safe(axes[a].values[index[a]]));
    }
    point.name = axes.empty() ? "base" : limit_length(name);
    NL_CHECK(names.insert(point.name).second, "sweep",
             "two points get the run directory name '{}' (values that differ only in quotes or "
             "unsafe characters?)", point.name);
    points.push_back(std::move(point));
    size_t a = axes.size();
    while (a > 0 && ++index[a - 1] == axes[a - 1].values.size()) index[--a] = 0;
    if (a == 0) break;
  }
  return points;
}

std::vector<std::string> point_override_texts(const SweepPoint& point) {
  std::vector<std::string> texts;
  for (const auto& [key, value] : point.overrides) {
    if (key == "seed") {
      texts.push_back("train.seed=" + value);
      texts.push_back("model.seed=" + value);
    } else {
      texts.push_back(key + "=" + value);
    }
  }
  return texts;
}

std::vector<SweepRow> run_sweep(const SweepOptions& options, const std::vector<SweepPoint>& points) {
  NL_CHECK(!options.out_dir.empty(), "sweep", "out_dir must be given");
  NL_CHECK(options.jobs >= 1, "sweep", "jobs must be >= 1, got {}", options.jobs);
  NL_CHECK(options.threads_per_run >= 0, "sweep", "threads_per_run must be >= 0, got {}", options.threads_per_run);
  const std::string binary = options.normlab_binary.empty() ? own_executable() : options.normlab_binary;
  NL_CHECK(::access(binary.c_str(), X_OK) == 0, "sweep", "cannot run '{}': {}", binary, std::strerror(errno));
  const fs::path out_dir = options.out_dir;
  const int threads = options.threads_per_run > 0 ? options.threads_per_run : (options.jobs > 1 ? 1 : 0);

  // Every point's command line, checked with load_config before anything runs.
  std::vector<std::vector<std::string>> commands;
  std::set<std::string> names;
  for (const SweepPoint& point : points) {
    NL_CHECK(names.insert(point.name).second, "sweep", "two points are named '{}'", point.name);
    std::vector<std::string> overrides = options.fixed_overrides;
    for (std::string& text : point_override_texts(point)) overrides.push_back(std::move(text));
    overrides.push_back("train.out_dir=" + toml_quote(out_dir.string()));
    overrides.push_back("train.name=" + toml_quote(point.name));
    if (threads > 0) overrides.push_back(fmt::format("train.threads={}", threads));
    try {
      load_config(options.config_path, overrides);
    } catch (const Error& e) {
      fail("sweep", "point '{}': {}", point.name, e.what());
    }
    std::vector<std::string> argv = {binary, "train", options.config_path};
    argv.insert(argv.end(), overrides.begin(), overrides.end());
    argv.push_back("--quiet");
    commands.push_back(std::move(argv));
  }

  std::error_code error;
  fs::create_directories(out_dir, error);
  NL_CHECK(!error && fs::is_directory(out_dir), "sweep", "cannot create '{}': {}", out_dir.string(),
           error.message());
  const fs::path csv_path = out_dir / "sweep.csv";

  std::vector<SweepRow> rows(points.size());
  std::vector<size_t> queue;
  for (size_t i = 0; i < points.size(); ++i) {
    rows[i].point = points[i];
    rows[i].run_dir = (out_dir / points[i].name).string();
    rows[i].status = "pending";
    if (is_completed_run(rows[i].run_dir) && read_summary_into(rows[i])) rows[i].skipped = true;
    else queue.push_back(i);
  }
  write_sweep_csv(csv_path, rows);
  if (!options.quiet && queue.size() < points.size())
    fmt::print("{} of {} points already completed in {}: skipped\n", points.size() - queue.size(),
               points.size(), out_dir.string());

  size_t done = points.size() - queue.size();
  auto finish = [&](size_t i, const std::string& failure) {
    SweepRow& row = rows[i];
    if (failure.empty() && read_summary_into(row)) {
      row.error.clear();
    } else {
      row.status = "failed";
      const std::string tail = log_tail(fs::path(row.run_dir) / "log.txt");
      row.error = failure.empty() ? "no summary.json" : failure;
      if (!tail.empty()) row.error += ": " + tail;
    }
    write_sweep_csv(csv_path, rows);
    if (!options.quiet) print_progress(++done, points.size(), row);
  };

  RunningChildren running;
  size_t next = 0;
  while (next < queue.size() || !running.list.empty()) {
    while (next < queue.size() && static_cast<int>(running.list.size()) < options.jobs) {
      const size_t i = queue[next++];
      fs::create_directories(rows[i].run_dir, error);
      std::string spawn_error = error ? fmt::format("cannot create '{}': {}", rows[i].run_dir, error.message()) : "";
      const pid_t pid = error ? -1 : spawn_logged(commands[i], fs::path(rows[i].run_dir) / "log.txt", spawn_error);
      if (pid < 0) finish(i, spawn_error);
      else running.list.emplace_back(pid, i);
    }
    bool reaped = false;
    for (size_t k = 0; k < running.list.size();) {
      int status = 0;
      const auto [pid, i] = running.list[k];
      const pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == 0 || (r < 0 && errno == EINTR)) {
        ++k;
        continue;
      }
      running.list.erase(running.list.begin() + static_cast<std::ptrdiff_t>(k));
      reaped = true;
      // A non-zero exit is a failure, except train.fail_on_divergence's exit after a divergence
      // it recorded: a diverged run is a result.
      std::string failure;
      if (r < 0) failure = fmt::format("waitpid failed: {}", std::strerror(errno));
      else if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        SweepRow probe = rows[i];
        if (!(WIFEXITED(status) && read_summary_into(probe) && probe.status == "diverged"))
          failure = describe_wait_status(status);
      }
      finish(i, failure);
    }
    if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return rows;
}

}  // namespace normlab
