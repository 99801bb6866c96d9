// normlab sweep CONFIG.toml key=v1,v2 ... [--set key=value ...] [--jobs N] [--threads N] [--out DIR]
// Runs the grid of overrides as child `normlab train` runs (sweep/sweep.h), prints a line per
// finished run and a final table. Exit 0 when every run completed or diverged (a divergence is a
// result), 1 when any run failed; a config or override typo fails before anything runs.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "cli/commands.h"
#include "io/shell_words.h"
#include "sweep/exit_codes.h"
#include "sweep/sweep.h"

namespace normlab::cli {

namespace {

std::string cell(double v) { return std::isfinite(v) ? fmt::format("{:.4f}", v) : "-"; }

void print_table(const std::vector<SweepRow>& rows) {
  size_t width = 4;
  for (const SweepRow& r : rows) width = std::max(width, r.point.name.size());
  fmt::print("\n{:<{}}  {:<9} {:>8} {:>10} {:>10} {:>10} {:>8}\n", "name", width, "status", "div_step",
             "train", "val", "best_val", "wall_s");
  for (const SweepRow& r : rows) {
    const bool measured = has_result(r.status);
    fmt::print("{:<{}}  {:<9} {:>8} {:>10} {:>10} {:>10} {:>8}{}\n", r.point.name, width, r.status,
               r.status == RunStatus::Diverged ? std::to_string(r.diverged_step) : "-",
               measured ? cell(r.final_train_loss) : "-", measured ? cell(r.final_val_loss) : "-",
               measured ? cell(r.best_val_loss) : "-",
               measured ? fmt::format("{:.1f}", r.wall_seconds) : "-", r.skipped ? "  (earlier)" : "");
  }
}

// This sweep as a pasteable command (the same directory, so it resumes): said when interrupted.
std::string sweep_command_line(const SweepOptions& options, const std::vector<std::string>& axes) {
  std::vector<std::string> argv = {own_executable_path(), "sweep", options.config_path};
  argv.insert(argv.end(), axes.begin(), axes.end());
  for (const std::string& fixed : options.fixed_overrides) {
    argv.push_back("--set");
    argv.push_back(fixed);
  }
  for (const std::string& option : {std::string("--out"), options.out_dir, std::string("--jobs"),
                                    std::to_string(options.jobs)})
    argv.push_back(option);
  if (options.threads_per_run > 0) argv.insert(argv.end(), {"--threads", std::to_string(options.threads_per_run)});
  if (options.quiet) argv.push_back("--quiet");
  return shell_command(argv);
}

}  // namespace

CLI::App* add_sweep_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("sweep", "Train every point of a grid of overrides (key=v1,v2 ...), "
                                          "several runs at once with --jobs");
  auto config = std::make_shared<std::string>();
  auto axis_args = std::make_shared<std::vector<std::string>>();
  auto fixed = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto jobs = std::make_shared<int>(1);
  auto threads = std::make_shared<int>(0);
  auto quiet = std::make_shared<bool>(false);
  cmd->add_option("config", *config, "config file")->required()->type_name("CONFIG");
  cmd->add_option("axes", *axis_args, "axes such as model.norm_placement=pre,post optim.lr=5e-4,1e-3 seed=1,2")
      ->type_name("KEY=V1,V2");
  cmd->add_option("--set", *fixed, "an override applied to every run (repeatable)")
      ->allow_extra_args(false)
      ->type_name("KEY=VALUE");
  cmd->add_option("--out", *out, "sweep directory (default runs/sweep-<config stem>)")->type_name("DIR");
  cmd->add_option("--jobs,-j", *jobs, "runs at a time")->capture_default_str()->type_name("N");
  cmd->add_option("--threads", *threads, "train.threads of each run (default: 1 when --jobs > 1)")->type_name("N");
  cmd->add_flag("--quiet", *quiet, "no line per finished run");
  cmd->callback([=, &exit_code] {
    SweepOptions options;
    options.config_path = *config;
    options.fixed_overrides = *fixed;
    options.out_dir = out->empty() ? "runs/sweep-" + std::filesystem::path(*config).stem().string() : *out;
    options.jobs = *jobs;
    options.threads_per_run = *threads;
    options.quiet = *quiet;
    options.command_line = sweep_command_line(options, *axis_args);
    const std::vector<SweepPoint> points = expand_grid(parse_sweep_axes(*axis_args));
    if (!options.quiet)
      fmt::print("sweep: {} point(s) of {} in {}, {} at a time\n", points.size(), *config, options.out_dir,
                 options.jobs);
    const std::vector<SweepRow> rows = run_sweep(options, points);
    print_table(rows);
    const auto count = [&](RunStatus status) {
      return std::count_if(rows.begin(), rows.end(), [&](const SweepRow& r) { return r.status == status; });
    };
    fmt::print("{} completed, {} diverged, {} failed; {}/sweep.csv (over seeds: sweep_seeds.csv)\n", count(RunStatus::Completed), count(RunStatus::Diverged),
               count(RunStatus::Failed), options.out_dir);
    exit_code = count(RunStatus::Failed) > 0 ? exit_codes::kFailed : exit_codes::kDone;
  });
  return cmd;
}

}  // namespace normlab::cli
