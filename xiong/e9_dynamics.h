// E9's reading of dynamics.csv (train/dynamics.h): one logged quantity of a run per update, over
// seeds with a 95% band, and the first update at which two arms' quantities part.
#pragma once
#include <string>
#include <vector>

#include "plot/gnuplot.h"
#include "xiong/training.h"

namespace normlab::xiong {

// A quantity of dynamics.csv. `column` is a column name in which "{top}" and "{bottom}" stand for
// the last and the first block's index; a column starting with "max:" is the maximum over every
// block of "blocks.N.<rest>".
struct DynamicsQuantity {
  std::string column, label;
  bool log_scale = true;  // compared and drawn in logs (positive quantities)
};

// The column with {top} and {bottom} resolved ("blocks.{top}.grad.w2" -> "blocks.7.grad.w2" for 8 layers).
std::string dynamics_column(std::string column, int64_t n_layers);

// The quantities E9 draws and compares.
std::vector<DynamicsQuantity> e9_quantities();

// The quantity's value at updates 1..steps in `run_dir`'s dynamics.csv (NaN where missing: a run
// that diverged, a column the run lacks). n_layers resolves {top}.
std::vector<double> dynamics_series(const std::string& run_dir, const DynamicsQuantity& q, int64_t n_layers,
                                    int64_t steps);

// Per seed, each run's series (missing runs skipped).
std::vector<std::vector<double>> series_over_seeds(const std::vector<const RunOutcome*>& runs,
                                                   const DynamicsQuantity& q, int64_t n_layers, int64_t steps);

// The mean over seeds at each update with its 95% t band (in logs for a log-scale quantity: the
// geometric mean and its band), as a chart series.
ChartSeries band_series(const std::vector<std::vector<double>>& seeds, const DynamicsQuantity& q);

// The first update (1-based) at which the 95% t intervals over seeds of the two arms' quantity
// (in logs for a log-scale one) do not overlap; -1 if they overlap at every update.
int64_t first_parting(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b,
                      const DynamicsQuantity& q);

// An explanation's label from its prediction (issue "front door", item 4): "supported" when every
// part holds; when every part fails, "contradicted" only if the runs were at least
// kE9ContradictionHorizon steps long (long enough that Post-LN without warmup at the lower rate
// learns: 1450-2250 steps at 5e-4 in v4), else "not sufficient at this strength and horizon";
// "mixed" otherwise.
inline constexpr int64_t kE9ContradictionHorizon = 2250;
std::string explanation_verdict(bool supported, bool failed, int64_t run_steps);

}  // namespace normlab::xiong
