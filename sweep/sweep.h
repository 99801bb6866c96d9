// Sweeps: a grid of config overrides, each point an ordinary run directory under one sweep
// directory, run by child `normlab train` processes (several at once with jobs > 1).
//   normlab sweep CONFIG.toml model.norm_placement=pre,post optim.lr=5e-4,1e-3 seed=1,2,3 --jobs 2
// "seed=..." sets both train.seed and model.seed. A diverged run is a result and never stops the
// sweep. sweep.csv: one row per point (see SweepRow).
//
// Each point runs as `normlab train CONFIG <fixed overrides> <point overrides>
// train.out_dir="<out_dir>" train.name="<point name>" [train.threads=N] --quiet`, its stdout and
// stderr appended to <out_dir>/logs/<point name>.txt (the sweep writes nothing in a run
// directory: the child that holds its lock is its only writer). A sweep holds the lock of its
// own directory, so two sweeps never run in one directory.
//
// Rerunning a sweep: a point whose run directory holds a run of the same config (its
// fingerprint.txt equals config_fingerprint of the point's config) is skipped when completed
// (summary.json, status completed or diverged), resumed (--resume) when it has a checkpoint, and
// otherwise started over (--overwrite); a resume that fails with an error is started over. A point
// whose run was made with another config (or without a fingerprint) is run again with --overwrite,
// and the sweep says so on stderr: earlier results are never reused silently.
//
// SIGINT, SIGTERM and SIGHUP are forwarded to the running children; the sweep waits for them,
// rewrites sweep.csv (they stay "pending") and throws Interrupted (normlab exits 128 + signal).
// The children also die with the sweep when it is killed outright (sweep/child_process.h).
// sweep.csv (RFC 4180 quoting: names hold commas) has the columns
//   name, <each axis key>, status, diverged_step, final_train_loss, final_val_loss,
//   best_val_loss, wall_s, run_dir, fingerprint, error
// and is rewritten atomically after every finished run (unfinished points: status "pending").
// Beside it, sweep_seeds.csv (rewritten with it, atomically) aggregates the seeds of each
// configuration: the points with the seed keys (seed, train.seed, model.seed) removed are grouped,
//   <each non-seed axis key>, seeds, n, n_completed, n_diverged, n_failed, mean_final_val_loss,
//   ci95_low, ci95_high, best_val_loss
// mean and the 95% Student t interval (stats/stats.h mean_interval) of final_val_loss over the
// completed runs (a diverged run's last loss is no sample of the configuration's; it is counted in
// n_diverged), best_val_loss the lowest over the completed runs; empty cells where undefined (no
// completed run; the interval of a single run). A sweep without a seed axis has one row per point, n = 1.
#pragma once
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "config/run_status.h"

namespace normlab {

struct SweepAxis {
  std::string key;                  // "optim.lr", or "seed"
  std::vector<std::string> values;  // as written ("5e-4", "post", "\"x\"")
};

struct SweepPoint {
  std::vector<std::pair<std::string, std::string>> overrides;  // (key, value) in axis order
  std::string name;  // run directory name made from the overrides, e.g. "norm_placement=post,lr=5e-4,seed=1"
                     // (the last part of each key, the full key where two axes share it; characters
                     // other than [A-Za-z0-9._=,+-] become '_', quotes are dropped; no axes: "base")
};

struct SweepOptions {
  std::string config_path;
  std::vector<std::string> fixed_overrides;  // applied to every point, before the axes
  std::string out_dir;                       // the sweep directory (runs go in out_dir/<point name>/)
  int jobs = 1;                              // runs at a time
  int threads_per_run = 0;                   // train.threads of each run; 0 = 1 when jobs > 1, else default
  std::string normlab_binary;                // empty: this process's own executable
  std::string command_line;                  // the sweep's own command, pasteable (said when interrupted)
  bool quiet = false;                        // no progress line (stdout) per finished run
};

struct SweepRow {
  SweepPoint point;
  std::string run_dir;
  RunStatus status = RunStatus::Pending;  // completed | diverged | failed (the child exited non-zero: error in log.txt) | pending
                       // | pending (in a sweep.csv written while the sweep runs, or interrupted)
  int64_t diverged_step = -1;
  double final_train_loss = 0, final_val_loss = 0, best_val_loss = 0, wall_seconds = 0;
  bool skipped = false;     // already completed, with the same config, before this invocation
  std::string fingerprint;  // config_fingerprint of the point's resolved config
  std::string error;        // failed runs: how the child ended and the last lines of its log
};

// The normlab CLI's main() calls this: only then may a sweep run its points with this process's own
// executable (SweepOptions::normlab_binary empty); any other program must name the CLI.
void declare_normlab_cli();

// Parses "key=v1,v2,..." arguments (errors name the argument).
std::vector<SweepAxis> parse_sweep_axes(const std::vector<std::string>& arguments);
// Cartesian product in axis order (last axis fastest).
std::vector<SweepPoint> expand_grid(const std::vector<SweepAxis>& axes);
// Runs (or skips, or resumes) every point; writes out_dir/sweep.csv and returns its rows in point
// order. Before starting anything it checks the binary and loads the config with every point's
// overrides (load_config), so a typo throws naming the point and the override. Throws
// Interrupted when a stop signal ended it.
std::vector<SweepRow> run_sweep(const SweepOptions& options, const std::vector<SweepPoint>& points);

// The config overrides of a point ("seed=3" becomes "train.seed=3", "model.seed=3").
std::vector<std::string> point_override_texts(const SweepPoint& point);
// Writes sweep.csv atomically (the axis columns are taken from the first row's point).
void write_sweep_csv(const std::filesystem::path& path, const std::vector<SweepRow>& rows);
// One configuration of a sweep over its seeds (sweep_seeds.csv).
struct SeedAggregate {
  std::vector<std::pair<std::string, std::string>> overrides;  // the point's, seed keys removed
  std::vector<std::string> seeds;                                // the seed values, in point order
  int n = 0, completed = 0, diverged = 0, failed = 0;            // n also counts pending points
  double mean_val_loss = NAN, ci95_low = NAN, ci95_high = NAN, best_val_loss = NAN;
};
// Groups the rows by their non-seed overrides, in order of first appearance.
std::vector<SeedAggregate> aggregate_over_seeds(const std::vector<SweepRow>& rows);
void write_sweep_seeds_csv(const std::filesystem::path& path, const std::vector<SweepRow>& rows);
// sweep.csv, then sweep_seeds.csv, in out_dir.
void write_sweep_results(const std::filesystem::path& out_dir, const std::vector<SweepRow>& rows);
// Reads a sweep.csv back (the axis columns are those between "name" and "status"); throws naming
// the file and line.
std::vector<SweepRow> read_sweep_csv(const std::filesystem::path& path);

}  // namespace normlab
