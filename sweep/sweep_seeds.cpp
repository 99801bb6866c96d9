// sweep_seeds.csv: each configuration of a sweep aggregated over its seeds (sweep/sweep.h).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "io/atomic_file.h"
#include "io/csv.h"
#include "stats/stats.h"
#include "sweep/sweep.h"

namespace fs = std::filesystem;

namespace normlab {

namespace {

bool is_seed_key(const std::string& key) { return key == "seed" || key == "train.seed" || key == "model.seed"; }

std::string cell(double v) { return std::isfinite(v) ? csv_number(v) : ""; }

// Adds one run to its configuration's counts and collects its final validation loss.
void count_row(SeedAggregate& group, std::vector<double>& val_losses, const SweepRow& row) {
  std::vector<std::string> seed_values;
  for (const auto& [key, value] : row.point.overrides)
    if (is_seed_key(key) && std::find(seed_values.begin(), seed_values.end(), value) == seed_values.end())
      seed_values.push_back(value);
  group.seeds.push_back(seed_values.empty() ? "-" : fmt::format("{}", fmt::join(seed_values, "/")));
  ++group.n;
  if (row.status == RunStatus::Diverged) ++group.diverged;
  if (row.status == RunStatus::Failed) ++group.failed;
  if (row.status != RunStatus::Completed) return;
  ++group.completed;
  val_losses.push_back(row.final_val_loss);
  if (std::isfinite(row.best_val_loss) && !(row.best_val_loss >= group.best_val_loss))
    group.best_val_loss = row.best_val_loss;
}

}  // namespace

std::vector<SeedAggregate> aggregate_over_seeds(const std::vector<SweepRow>& rows) {
  std::vector<SeedAggregate> groups;
  std::vector<std::vector<double>> val_losses;
  for (const SweepRow& row : rows) {
    std::vector<std::pair<std::string, std::string>> config;
    for (const auto& kv : row.point.overrides)
      if (!is_seed_key(kv.first)) config.push_back(kv);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const SeedAggregate& g) { return g.overrides == config; });
    if (it == groups.end()) {
      groups.push_back({config});
      val_losses.emplace_back();
      it = groups.end() - 1;
    }
    count_row(*it, val_losses[static_cast<size_t>(it - groups.begin())], row);
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    const stats::Interval interval = stats::mean_interval(val_losses[g]);  // non-finite losses dropped
    if (!interval.valid()) continue;
    groups[g].mean_val_loss = interval.estimate;
    if (interval.n >= 2) {
      groups[g].ci95_low = interval.low;
      groups[g].ci95_high = interval.high;
    }
  }
  return groups;
}

void write_sweep_seeds_csv(const fs::path& path, const std::vector<SweepRow>& rows) {
  const std::vector<SeedAggregate> groups = aggregate_over_seeds(rows);
  std::vector<std::string> keys;
  for (const SeedAggregate& g : groups)
    for (const auto& [key, _] : g.overrides)
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  std::vector<std::string> header = keys;
  for (const char* column : {"seeds", "n", "n_completed", "n_diverged", "n_failed", "mean_final_val_loss", "ci95_low",
                             "ci95_high", "best_val_loss"})
    header.push_back(column);
  std::string text = csv_line(header);
  for (const SeedAggregate& g : groups) {
    std::vector<std::string> cells;
    for (const std::string& key : keys) {
      const auto it = std::find_if(g.overrides.begin(), g.overrides.end(), [&](const auto& kv) { return kv.first == key; });
      cells.push_back(it == g.overrides.end() ? "" : it->second);
    }
    cells.push_back(fmt::format("{}", fmt::join(g.seeds, " ")));
    for (const int count : {g.n, g.completed, g.diverged, g.failed}) cells.push_back(std::to_string(count));
    for (const double v : {g.mean_val_loss, g.ci95_low, g.ci95_high, g.best_val_loss}) cells.push_back(cell(v));
    text += csv_line(cells);
  }
  write_file_atomic(path.string(), text);
}

void write_sweep_results(const fs::path& out_dir, const std::vector<SweepRow>& rows) {
  write_sweep_csv(out_dir / "sweep.csv", rows);
  write_sweep_seeds_csv(out_dir / "sweep_seeds.csv", rows);
}

}  // namespace normlab
