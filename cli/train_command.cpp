// normlab train CONFIG.toml [section.key=value ...] [--overwrite] [--quiet]
// normlab train --resume RUN_DIR [train.steps=N | train.epochs=N [--allow-schedule-change]] [--quiet]
// Under an MPI launcher (mpirun -np N normlab train ...) the N processes train one model data
// parallel (dist/data_parallel.h); rank 0 writes the run directory and prints.
#include <fmt/core.h>

#include <filesystem>

#include "cli/commands.h"
#include "dist/communicator.h"
#include "io/shell_words.h"
#include "config/config.h"
#include "sweep/exit_codes.h"
#include "train/trainer.h"

namespace normlab::cli {
namespace {

struct TrainArgs {
  std::string config, resume;
  std::vector<std::string> overrides;
  bool overwrite = false, quiet = false, allow_schedule_change = false;
};

// --resume continues a run with its saved config.toml; the one override it takes is train.steps=N
// or, for a run that counts epochs, train.epochs=N, which extends the run to N steps or epochs
// (train/trainer_files.h extend_run_config checks N). Sets options.extend_to_steps or _epochs.
void set_extension(TrainArgs args, TrainOptions& options) {
  if (args.config.find('=') != std::string::npos) {  // the first positional word is an override here
    args.overrides.insert(args.overrides.begin(), args.config);
    args.config.clear();
  }
  if (!args.config.empty())
    usage_error("train", "--resume continues a run with its saved config.toml: give no config file (got '{}')",
                args.config);
  for (const std::string& text : args.overrides) {
    const std::string key = text.substr(0, text.find('='));
    if (key != "train.steps" && key != "train.epochs")
      usage_error("train", "--resume continues a run with its saved config.toml: override '{}' would change '{}' "
                  "of a run under way; the only override --resume takes is train.steps=N (train.epochs=N for a run "
                  "that counts epochs), to extend the run (start a new run for anything else)", text, key);
  }
  if (args.overrides.empty()) return;
  const std::string saved = (std::filesystem::path(args.resume) / "config.toml").string();
  const RunConfig extended = load_config(saved, args.overrides);  // the values checked as any override's
  const RunConfig original = load_config(saved, {});
  if (extended.train.steps != original.train.steps) options.extend_to_steps = extended.train.steps;
  if (extended.train.epochs != original.train.epochs) options.extend_to_epochs = extended.train.epochs;
}

// Trains and prints the outcome; returns the exit code.
int run_train(const TrainArgs& args, Communicator* comm) {
  TrainOptions options;
  options.quiet = args.quiet;
  options.resume_dir = args.resume;
  options.overwrite = args.overwrite;
  options.comm = comm;
  RunConfig rc;
  if (args.resume.empty()) {
    if (args.config.empty()) usage_error("train", "give a config file (or --resume RUN_DIR)");
    rc = load_config(args.config, args.overrides);
  } else {
    set_extension(args, options);
  }
  if (args.allow_schedule_change && options.extend_to_steps == 0 && options.extend_to_epochs == 0)
    usage_error("train", "--allow-schedule-change goes with --resume RUN_DIR train.steps=N or train.epochs=N (extending a run)");
  options.allow_schedule_change = args.allow_schedule_change;
  const TrainResult r = train(rc, options);
  if (comm != nullptr && !comm->is_root()) return exit_codes::kDone;  // rank 0 speaks for the job
  if (r.status == RunStatus::Diverged) {
    fmt::print("{}: diverged at step {} ({})\n", r.run_dir, r.steps_done, r.reason);
    return r.fail_on_divergence ? exit_codes::kDiverged : exit_codes::kDone;
  }
  if (r.status == RunStatus::Interrupted) {
    fmt::print(stderr, "{}: interrupted after {} steps (checkpoint and summary written); continue it with:\n"
                       "  normlab train --resume {}\n", r.run_dir, r.steps_done, shell_quote(r.run_dir));
    return exit_codes::kSignalBase + r.stop_signal;
  }
  fmt::print("{}: {} after {} steps, train loss {:.4f}, val loss {:.4f}, {:.0f} tokens/s, {:.1f} s\n",
             r.run_dir, r.status, r.steps_done, r.final_train_loss, r.final_val_loss, r.tokens_per_second,
             r.wall_seconds);
  return exit_codes::kDone;
}

// Under MPI an error on one rank must end the whole job: the others would wait in their next
// collective forever. The error is printed with its rank, then MPI_Abort ends every process with
// the exit code the error would have had alone.
int run_train_on_world(const TrainArgs& args) {
  const std::unique_ptr<Communicator> world = open_world_communicator();
  if (world == nullptr || world->size() == 1) return run_train(args, world.get());
  int code = exit_codes::kFailed;
  try {
    return run_train(args, world.get());
  } catch (const UsageError& e) {
    fmt::print(stderr, "error (rank {} of {}): {}\n", world->rank(), world->size(), e.what());
    code = exit_codes::kUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error (rank {} of {}): {}\n", world->rank(), world->size(), e.what());
  }
  std::fflush(stderr);
  world->abort(code);
  return code;  // not reached: abort() ends the process
}

}  // namespace

CLI::App* add_train_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("train", "Train a model from a TOML config (overrides: section.key=value); "
                                          "data parallel under mpirun -np N");
  auto args = std::make_shared<TrainArgs>();
  cmd->add_option("config", args->config, "config file (not needed with --resume)")->type_name("CONFIG");
  cmd->add_option("overrides", args->overrides, "overrides such as optim.lr=1e-3 model.norm_placement=post")
      ->type_name("KEY=VALUE");
  cmd->add_option("--resume", args->resume, "continue the run saved in this run directory")->type_name("RUN_DIR");
  cmd->add_flag("--overwrite", args->overwrite, "start over in a run directory that holds an earlier run (its files are removed)")
      ->excludes("--resume");
  cmd->add_flag("--allow-schedule-change", args->allow_schedule_change,
                "with --resume RUN_DIR train.steps=N: extend a run whose schedule decays to train.steps (linear, "
                "cosine), changing the learning rate of the steps to come");
  cmd->add_flag("--quiet", args->quiet, "no progress output");
  cmd->callback([args, &exit_code] { exit_code = run_train_on_world(*args); });
  return cmd;
}

}  // namespace normlab::cli
