// Charts from run directories (train/run_dir.h), drawn by gnuplot into .svg or .png.
// Legend entries are run labels (below); a series equal to an earlier one says so (gnuplot.h).
//
// `metric` picks the column per layer N in grad_norms.csv: "blocks.N.<metric>" (one parameter;
// default ffn.w2.weight, the FFN output projection whose gradient Xiong et al. 2020 plot in
// Figure 3) or "<metric>.N": "layer" -> layer.N (L2 norm over every parameter of block N), or an
// extra per-layer column the trainer writes (e.g. residual_rms.N).
// Several metrics may be given separated by commas ("ffn.w2.weight,layer"): one line per run and
// metric. Every function throws "[plot] ..." naming the missing file/column or gnuplot's error.
#pragma once
#include <string>
#include <vector>

namespace normlab {

inline constexpr const char* kDefaultGradMetric = "ffn.w2.weight";

// `labels`: one legend label per run (the CLI's --label); empty: each run directory's name, with
// as many parent directories as it takes to tell apart runs of the same name. Layers count from 1.

// (a) Gradient norm at initialization (grad_norms.csv's step-1 row: the gradient of the first
// update) against layer index, one line per run, log-scale y.
void plot_init_grad_norms(const std::vector<std::string>& run_dirs, const std::string& output,
                          const std::string& metric = kDefaultGradMetric, const std::string& title = "",
                          const std::vector<std::string>& labels = {});

// (b) Gradient norm of each layer over training steps: one line per layer and run (colour = layer,
// dash pattern = run), log y.
void plot_grad_norms_over_steps(const std::vector<std::string>& run_dirs, const std::string& output,
                                const std::string& metric = kDefaultGradMetric, const std::string& title = "",
                                const std::vector<std::string>& labels = {});

// (d) One quantity of dynamics.csv (train/dynamics.h) over the logged updates: a per-layer
// column "blocks.N.<metric>" (grad.w2, norm1.input_rms, attn.logit_max, update_ratio, ...) as
// one line per layer and run (colour = layer, dash = run), or a whole-model column (output_change,
// logit_max, probe_loss) as one line per run; log y when every value is positive.
void plot_dynamics(const std::vector<std::string>& run_dirs, const std::string& output, const std::string& metric,
                   const std::string& title = "", const std::vector<std::string>& labels = {});

// (c) Train loss (solid) and validation loss (dashed, same colour) of several runs from their
// metrics.jsonl. log_y draws the loss on a log scale.
void plot_loss_curves(const std::vector<std::string>& run_dirs, const std::string& output,
                      const std::string& title = "", bool log_y = false, const std::vector<std::string>& labels = {});

}  // namespace normlab
