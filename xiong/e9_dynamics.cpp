#include "xiong/e9_dynamics.h"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "io/csv.h"
#include "stats/stats.h"
#include "train/run_dir.h"

namespace normlab::xiong {

namespace {

// The value of each seed at update index i (finite ones only), in logs when asked.
std::vector<double> column_at(const std::vector<std::vector<double>>& seeds, size_t i, bool logs) {
  std::vector<double> out;
  for (const auto& s : seeds) {
    if (i >= s.size() || !std::isfinite(s[i]) || (logs && s[i] <= 0)) continue;
    out.push_back(logs ? std::log(s[i]) : s[i]);
  }
  return out;
}

}  // namespace

std::string dynamics_column(std::string column, int64_t n_layers) {
  for (const auto& [word, value] : {std::pair<std::string, int64_t>{"{top}", n_layers - 1}, {"{bottom}", 0}})
    if (const size_t at = column.find(word); at != std::string::npos) column.replace(at, word.size(), std::to_string(value));
  return column;
}

std::vector<DynamicsQuantity> e9_quantities() {
  return {{"output_change", "output change, RMS of z(W_t+1) - z(W_t) on the probe batch"},
          {"logit_max", "largest |output logit|"},
          {"max:attn.logit_max", "largest attention logit over all layers", false},
          {"blocks.{top}.grad.w2", "||dL/dW2|| of the last block"},
          {"blocks.{bottom}.grad.w2", "||dL/dW2|| of the first block"},
          {"blocks.{top}.update_ratio", "||dW|| / ||W|| of the last block"},
          {"blocks.{bottom}.update_ratio", "||dW|| / ||W|| of the first block"},
          {"blocks.{top}.adam.sqrt_v_mean", "Adam's mean sqrt(v_hat) in the last block"},
          {"blocks.{top}.norm2.input_rms", "RMS of the last block's second norm input"}};
}

std::vector<double> dynamics_series(const std::string& run_dir, const DynamicsQuantity& q, int64_t n_layers,
                                    int64_t steps) {
  std::vector<double> out(static_cast<size_t>(steps), NAN);
  const std::filesystem::path file = std::filesystem::path(run_dir) / run_files::kDynamics;
  if (!std::filesystem::exists(file)) return out;
  const CsvTable t = read_csv(file);
  std::vector<int> columns;
  if (q.column.rfind("max:", 0) == 0) {
    for (int64_t l = 0; l < n_layers; ++l)
      if (const int c = t.column(fmt::format("blocks.{}.{}", l, q.column.substr(4))); c >= 0) columns.push_back(c);
  } else if (const int c = t.column(dynamics_column(q.column, n_layers)); c >= 0) {
    columns.push_back(c);
  }
  if (columns.empty()) return out;
  for (const auto& row : t.rows) {
    const auto step = static_cast<int64_t>(row[0]);
    if (step < 1 || step > steps) continue;
    double v = -INFINITY;
    for (const int c : columns) v = std::max(v, row[static_cast<size_t>(c)]);
    out[static_cast<size_t>(step - 1)] = v;
  }
  return out;
}

std::vector<std::vector<double>> series_over_seeds(const std::vector<const RunOutcome*>& runs,
                                                   const DynamicsQuantity& q, int64_t n_layers, int64_t steps) {
  std::vector<std::vector<double>> out;
  for (const RunOutcome* r : runs) out.push_back(dynamics_series(r->run_dir, q, n_layers, steps));
  return out;
}

ChartSeries band_series(const std::vector<std::vector<double>>& seeds, const DynamicsQuantity& q) {
  ChartSeries s;
  const size_t steps = seeds.empty() ? 0 : seeds.front().size();
  for (size_t i = 0; i < steps; ++i) {
    const std::vector<double> v = column_at(seeds, i, q.log_scale);
    if (v.size() < 2) continue;
    const Interval m = mean_interval(v);
    auto back = [&](double x) { return q.log_scale ? std::exp(x) : x; };
    s.points.emplace_back(static_cast<double>(i + 1), back(m.estimate));
    s.band.emplace_back(back(m.low), back(m.high));
  }
  return s;
}

int64_t first_parting(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b,
                      const DynamicsQuantity& q) {
  const size_t steps = std::min(a.empty() ? 0 : a.front().size(), b.empty() ? 0 : b.front().size());
  for (size_t i = 0; i < steps; ++i) {
    const std::vector<double> va = column_at(a, i, q.log_scale), vb = column_at(b, i, q.log_scale);
    if (va.size() < 2 || vb.size() < 2) continue;
    const Interval ia = mean_interval(va), ib = mean_interval(vb);
    if (ia.high < ib.low || ib.high < ia.low) return static_cast<int64_t>(i + 1);
  }
  return -1;
}

}  // namespace normlab::xiong
