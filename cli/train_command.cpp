// normlab train CONFIG.toml [section.key=value ...] [--overwrite] [--resume RUN_DIR] [--quiet]
#include <fmt/core.h>

#include "cli/commands.h"
#include "experiments/exit_codes.h"
#include "experiments/config.h"
#include "experiments/trainer.h"

namespace normlab::cli {

CLI::App* add_train_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("train", "Train a model from a TOML config (overrides: section.key=value)");
  auto config = std::make_shared<std::string>();
  auto overrides = std::make_shared<std::vector<std::string>>();
  auto resume = std::make_shared<std::string>();
  auto overwrite = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  cmd->add_option("config", *config, "config file (not needed with --resume)")->type_name("CONFIG");
  cmd->add_option("overrides", *overrides, "overrides such as optim.lr=1e-3 model.norm_placement=post")
      ->type_name("KEY=VALUE");
  cmd->add_option("--resume", *resume, "continue the run saved in this run directory")->type_name("RUN_DIR");
  cmd->add_flag("--overwrite", *overwrite, "start over in a run directory that holds an earlier run (its files are removed)")
      ->excludes("--resume");
  cmd->add_flag("--quiet", *quiet, "no progress output");
  cmd->callback([=, &exit_code] {
    TrainOptions options;
    options.quiet = *quiet;
    options.resume_dir = *resume;
    options.overwrite = *overwrite;
    RunConfig rc;
    if (resume->empty()) {
      if (config->empty()) usage_error("train", "give a config file (or --resume RUN_DIR)");
      rc = load_config(*config, *overrides);
    } else if (!overrides->empty() || !config->empty()) {
      usage_error("train", "--resume continues a run with its saved config.toml; give no config or overrides");
    }
    const TrainResult r = train(rc, options);
    if (r.status == "diverged") {
      fmt::print("{}: diverged at step {} ({})\n", r.run_dir, r.steps_done, r.reason);
      const bool strict = resume->empty() ? rc.train.fail_on_divergence : false;
      exit_code = strict ? exit_codes::kDiverged : exit_codes::kDone;
      return;
    }
    fmt::print("{}: {} after {} steps, train loss {:.4f}, val loss {:.4f}, {:.0f} tokens/s, {:.1f} s\n",
               r.run_dir, r.status, r.steps_done, r.final_train_loss, r.final_val_loss, r.tokens_per_second,
               r.wall_seconds);
  });
  return cmd;
}

}  // namespace normlab::cli
