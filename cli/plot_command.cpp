// normlab plot RUN_DIR... --out FILE.svg|.png [--kind init_grad_norms|grad_norms_over_steps|loss|dynamics] [--label TEXT ...]
#include <fmt/core.h>

#include "cli/commands.h"
#include "plot/plot.h"

namespace normlab::cli {

CLI::App* add_plot_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("plot", "Plot gradient norms and loss curves of run directories (gnuplot)");
  auto runs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto kind = std::make_shared<std::string>("init_grad_norms");
  auto metric = std::make_shared<std::string>(kDefaultGradMetric);
  auto title = std::make_shared<std::string>();
  auto log_y = std::make_shared<bool>(false);
  auto labels = std::make_shared<std::vector<std::string>>();
  cmd->add_option("runs", *runs, "run directories")->required()->type_name("RUN_DIR");
  cmd->add_option("--out", *out, "output file (.svg or .png)")->required()->type_name("FILE");
  cmd->add_option("--kind", *kind,
                  "init_grad_norms: per-layer gradient norm at initialization (one line per run); "
                  "grad_norms_over_steps: per-layer gradient norm over training (every run: colour = layer, "
                  "dash = run); "
                  "loss: train/val loss curves; "
                  "dynamics: a column of dynamics.csv (log.dynamics_steps) over the first updates")
      ->check(CLI::IsMember({"init_grad_norms", "grad_norms_over_steps", "loss", "dynamics"}))
      ->type_name("KIND")
      ->capture_default_str();
  cmd->add_option("--metric", *metric,
                  "gradient column suffix per layer: ffn.w2.weight, ffn.w1.weight, ... or 'layer' for the "
                  "whole layer's norm; with --kind dynamics a dynamics.csv column: per layer grad.w2, "
                  "norm1.input_rms, attn.logit_max, attn.entropy, adam.sqrt_v_mean, update_ratio, ... or "
                  "output_change, logit_max, probe_loss (default there: output_change)")
      ->capture_default_str()
      ->type_name("NAME");
  cmd->add_option("--title", *title, "chart title")->type_name("TEXT");
  cmd->add_flag("--log-y", *log_y, "log-scale loss axis (loss plots)");
  cmd->add_option("--label", *labels, "legend label of each run, in order (repeat it: one per run; default: the "
                  "run directory's name, with parents where two runs share it)")->type_name("TEXT");
  cmd->callback([=, &exit_code] {
    if (*kind == "init_grad_norms") plot_init_grad_norms(*runs, *out, *metric, *title, *labels);
    else if (*kind == "grad_norms_over_steps") plot_grad_norms_over_steps(*runs, *out, *metric, *title, *labels);
    else if (*kind == "dynamics")
      plot_dynamics(*runs, *out, cmd->get_option("--metric")->count() > 0 ? *metric : "output_change", *title, *labels);
    else plot_loss_curves(*runs, *out, *title, *log_y, *labels);
    fmt::print("wrote {}\n", *out);
  });
  return cmd;
}

}  // namespace normlab::cli
