#include "plot/plot.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "core/error.h"
#include "plot/gnuplot.h"
#include "train/run_dir.h"

namespace fs = std::filesystem;

namespace normlab {
namespace {

constexpr const char* kLayerAxis = "layer (1 = next to the embeddings)";

// The path's components, without a trailing empty one ("runs/a/" -> runs, a).
std::vector<std::string> components(const std::string& run_dir) {
  std::vector<std::string> parts;
  for (const fs::path& part : fs::path(run_dir).lexically_normal())
    if (!part.empty() && part != ".") parts.push_back(part.string());
  return parts;
}

// The label of each run: `labels` when given (one per run), else the run directory's name, with
// as many parent directories as it takes to tell runs of the same name apart ("sweep1/a", "sweep2/a").
std::vector<std::string> run_labels(const std::vector<std::string>& run_dirs, const std::vector<std::string>& labels) {
  if (!labels.empty()) {
    NL_CHECK(labels.size() == run_dirs.size(), "plot", "{} --label value(s) for {} run directories: give one per run",
             labels.size(), run_dirs.size());
    return labels;
  }
  std::vector<std::string> out(run_dirs.size());
  for (size_t depth = 1; depth <= 64; ++depth) {
    for (size_t r = 0; r < run_dirs.size(); ++r) {
      const std::vector<std::string> parts = components(run_dirs[r]);
      const size_t from = parts.size() > depth ? parts.size() - depth : 0;
      out[r].clear();
      for (size_t i = from; i < parts.size(); ++i) out[r] += (out[r].empty() ? "" : "/") + parts[i];
    }
    std::vector<std::string> sorted = out;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()) break;
  }
  return out;
}

std::vector<std::string> split_metrics(const std::string& metric) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= metric.size()) {
    const size_t comma = std::min(metric.find(',', start), metric.size());
    if (comma > start) out.push_back(metric.substr(start, comma - start));
    start = comma + 1;
  }
  NL_CHECK(!out.empty(), "plot", "empty gradient-norm metric");
  return out;
}

// N of a grad_norms.csv column "blocks.N.<metric>" (one parameter's norm), -1 for other columns.
int block_column_layer(const std::string& column, const std::string& metric) {
  const std::string head = "blocks.", tail = "." + metric;
  if (column.size() <= head.size() + tail.size() || !column.starts_with(head) || !column.ends_with(tail)) return -1;
  const std::string digits = column.substr(head.size(), column.size() - head.size() - tail.size());
  if (digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::atoi(digits.c_str());
}

// Column index of `metric` for every layer N present in the table: the column
// "blocks.N.<metric>" (one parameter) or "<metric>.N" (layer.N, residual_rms.N, ...).
std::map<int, int> find_layer_columns(const CsvTable& table, const std::string& metric) {
  std::map<int, int> columns;
  const std::string prefix = metric + ".";
  for (size_t c = 0; c < table.columns.size(); ++c) {
    const std::string& name = table.columns[c];
    if (const int layer = block_column_layer(name, metric); layer >= 0) {
      columns[layer] = static_cast<int>(c);
    } else if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size() &&
               name.find_first_not_of("0123456789", prefix.size()) == std::string::npos) {
      columns[std::atoi(name.c_str() + prefix.size())] = static_cast<int>(c);
    }
  }
  return columns;
}

std::map<int, int> layer_columns(const CsvTable& table, const std::string& metric, const std::string& file) {
  const std::map<int, int> columns = find_layer_columns(table, metric);
  NL_CHECK(!columns.empty(), "plot", "{} has no column blocks.N.{} or {}.N (metric '{}'{})", file, metric, metric,
           metric,
           table.column("encoder.layer.0") >= 0
               ? "; an encoder-decoder's layers are --metric encoder.layer,decoder.layer"
               : "");
  return columns;
}

// A run's grad_norms.csv or dynamics.csv (`name`), whose first column must be "step".
CsvTable read_step_table(const std::string& run_dir, const char* name, std::string& file) {
  file = (fs::path(run_dir) / name).string();
  NL_CHECK(fs::exists(file), "plot", "missing {}: is '{}' a run directory?", file, run_dir);
  return read_step_csv(file);
}

// One line per layer of run r (colour = layer, dash pattern = run) from `columns` (layer -> column).
void add_layer_series(Chart& chart, const CsvTable& table, const std::map<int, int>& columns,
                      const std::vector<std::string>& names, size_t r) {
  for (const auto& [layer, column] : columns) {
    ChartSeries series;
    series.title = names.size() == 1 ? fmt::format("layer {}", layer + 1) : fmt::format("{}: layer {}", names[r], layer + 1);
    series.color = layer + 1;
    series.dash = static_cast<int>(r) + 1;
    series.markers = table.rows.size() < 30;
    for (const auto& row : table.rows) series.points.emplace_back(row[0], row[static_cast<size_t>(column)]);
    chart.series.push_back(std::move(series));
  }
}

// The y label for a metric, from the column it was found in.
std::string metric_label(const CsvTable& table, const std::map<int, int>& columns,
                         const std::string& metric) {
  if (table.columns[columns.begin()->second].rfind("blocks.", 0) == 0)
    return "gradient L2 norm of " + metric;
  return metric == "layer" ? "gradient L2 norm of each layer (all its parameters)" : metric;
}

}  // namespace

void plot_init_grad_norms(const std::vector<std::string>& run_dirs, const std::string& output,
                          const std::string& metric, const std::string& title, const std::vector<std::string>& labels) {
  NL_CHECK(!run_dirs.empty(), "plot", "no run directories given for '{}'", output);
  const std::vector<std::string> metrics = split_metrics(metric);
  const std::vector<std::string> names = run_labels(run_dirs, labels);
  Chart chart;
  chart.title = title.empty() ? "Gradient norm at initialization" : title;
  chart.xlabel = kLayerAxis;
  chart.ylabel = "gradient L2 norm at initialization";
  chart.log_y = true;
  int max_layer = 0;
  for (size_t r = 0; r < run_dirs.size(); ++r) {
    std::string file;
    const CsvTable table = read_step_table(run_dirs[r], run_files::kGradNorms, file);
    // Update 1's gradient, the model at initialization (logs written before updates counted from 1
    // call it step 0).
    const std::vector<double>* init_row = nullptr;
    for (const auto& row : table.rows)
      if ((row[0] == 1.0 || row[0] == 0.0) && (!init_row || row[0] < (*init_row)[0])) init_row = &row;
    NL_CHECK(init_row != nullptr, "plot", "{} has no step-1 row (the gradient at initialization)", file);
    for (size_t m = 0; m < metrics.size(); ++m) {
      const std::map<int, int> columns = layer_columns(table, metrics[m], file);
      if (metrics.size() == 1) chart.ylabel = metric_label(table, columns, metrics[m]) + " at initialization";
      ChartSeries series;
      series.title = metrics.size() == 1 ? names[r] : fmt::format("{} ({})", names[r], metrics[m]);
      series.color = static_cast<int>(r) + 1;
      series.dash = m > 0 ? 2 : 1;
      series.markers = true;
      for (const auto& [layer, column] : columns) {
        series.points.emplace_back(layer + 1, (*init_row)[column]);  // layers count from 1, as in the papers
        max_layer = std::max(max_layer, layer + 1);
      }
      chart.series.push_back(std::move(series));
    }
  }
  chart.integer_x = max_layer < 24;
  render_chart(chart, output);
}

void plot_grad_norms_over_steps(const std::vector<std::string>& run_dirs, const std::string& output,
                                const std::string& metric, const std::string& title,
                                const std::vector<std::string>& labels) {
  NL_CHECK(!run_dirs.empty(), "plot", "no run directories given for '{}'", output);
  const std::vector<std::string> names = run_labels(run_dirs, labels);
  Chart chart;
  chart.title = title.empty() ? (run_dirs.size() == 1 ? "Gradient norm per layer during training: " + names[0]
                                                      : "Gradient norm per layer during training")
                              : title;
  chart.xlabel = "step";
  chart.x_from_zero = true;
  chart.log_y = true;
  // Colour = layer, dash pattern = run: every layer of every run, one legend entry each.
  for (size_t r = 0; r < run_dirs.size(); ++r) {
    std::string file;
    const CsvTable table = read_step_table(run_dirs[r], run_files::kGradNorms, file);
    NL_CHECK(!table.rows.empty(), "plot", "{} has no rows", file);
    const std::map<int, int> columns = layer_columns(table, metric, file);
    chart.ylabel = metric_label(table, columns, metric);
    add_layer_series(chart, table, columns, names, r);
  }
  render_chart(chart, output);
}

void plot_dynamics(const std::vector<std::string>& run_dirs, const std::string& output, const std::string& metric,
                   const std::string& title, const std::vector<std::string>& labels) {
  NL_CHECK(!run_dirs.empty(), "plot", "no run directories given for '{}'", output);
  const std::vector<std::string> names = run_labels(run_dirs, labels);
  Chart chart;
  chart.title = title.empty() ? fmt::format("{} over the first updates", metric) : title;
  chart.xlabel = "step";
  chart.ylabel = metric;
  chart.x_from_zero = true;
  bool positive = true;
  for (size_t r = 0; r < run_dirs.size(); ++r) {
    const std::string file = (fs::path(run_dirs[r]) / run_files::kDynamics).string();
    NL_CHECK(fs::exists(file), "plot", "missing {}: train '{}' with log.dynamics_steps = N to write it", file,
             run_dirs[r]);
    std::string read_from;
    const CsvTable table = read_step_table(run_dirs[r], run_files::kDynamics, read_from);
    const std::map<int, int> per_layer = find_layer_columns(table, metric);
    const int single = table.column(metric);
    NL_CHECK(!per_layer.empty() || single > 0, "plot", "{} has no column blocks.N.{} or {} (its columns: {}, ...)",
             file, metric, metric, table.columns.size() > 1 ? table.columns[1] : std::string("none"));
    const size_t before = chart.series.size();
    if (!per_layer.empty()) {
      add_layer_series(chart, table, per_layer, names, r);
    } else {
      ChartSeries series{.title = names[r], .color = static_cast<int>(r) + 1, .markers = table.rows.size() < 30};
      for (const auto& row : table.rows) series.points.emplace_back(row[0], row[static_cast<size_t>(single)]);
      chart.series.push_back(std::move(series));
    }
    for (size_t i = before; i < chart.series.size(); ++i)
      for (const auto& [x, y] : chart.series[i].points) positive = positive && y > 0;
  }
  chart.log_y = positive;  // norms, sizes and changes span decades; entropies and logits may not be positive
  render_chart(chart, output);
}

void plot_loss_curves(const std::vector<std::string>& run_dirs, const std::string& output,
                      const std::string& title, bool log_y, const std::vector<std::string>& labels) {
  NL_CHECK(!run_dirs.empty(), "plot", "no run directories given for '{}'", output);
  const std::vector<std::string> names = run_labels(run_dirs, labels);
  Chart chart;
  chart.title = title.empty() ? "Training and validation loss" : title;
  chart.xlabel = "step";
  chart.ylabel = "cross-entropy loss";
  chart.log_y = log_y;
  chart.x_from_zero = true;
  for (size_t r = 0; r < run_dirs.size(); ++r) {
    const std::string file = (fs::path(run_dirs[r]) / run_files::kMetrics).string();
    NL_CHECK(fs::exists(file), "plot", "missing {}: is '{}' a run directory?", file, run_dirs[r]);
    ChartSeries train, val;
    train.title = names[r] + " train";
    val.title = names[r] + " val";
    train.color = val.color = static_cast<int>(r) + 1;
    val.dash = 2;
    val.markers = true;
    for (const nlohmann::json& record : read_metrics(file)) {
      if (!record.contains(kStepKey) || !record[kStepKey].is_number()) continue;
      const double step = record[kStepKey].get<double>();
      // null (a NaN/Inf loss) is skipped: the chart shows the run up to where it diverged
      if (record.contains(kTrainLossKey) && record[kTrainLossKey].is_number())
        train.points.emplace_back(step, record[kTrainLossKey].get<double>());
      if (record.contains(kValLossKey) && record[kValLossKey].is_number())
        val.points.emplace_back(step, record[kValLossKey].get<double>());
    }
    NL_CHECK(!train.points.empty() || !val.points.empty(), "plot", "{} has no {} or {} values", file,
             kTrainLossKey, kValLossKey);
    if (!train.points.empty()) chart.series.push_back(std::move(train));
    if (!val.points.empty()) chart.series.push_back(std::move(val));
  }
  render_chart(chart, output);
}

}  // namespace normlab
