// sweep_seeds.csv: each configuration of a sweep over its seeds (mean and 95% t interval of the
// final validation loss over the completed runs, counts of diverged and failed ones), checked
// against the formula computed here.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "command_util.h"
#include "dir_snapshot.h"
#include "io/csv.h"
#include "sweep/sweep.h"
#include "sweep_test_util.h"
#include "test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;

SweepRow row(std::vector<std::pair<std::string, std::string>> overrides, RunStatus status, double val, double best) {
  SweepRow r;
  r.point.overrides = std::move(overrides);
  r.status = status;
  r.final_val_loss = val;
  r.best_val_loss = best;
  return r;
}

// Mean and the half-width of the 95% t interval, from the textbook formula; t quantiles
// t_{0.975, df} from a table (df 1, 2).
struct Expected {
  double mean, half_width;
  // stats::t_quantile_975 tabulates t to 3 decimals (4.303 for 4.302652...): the interval is
  // compared within that rounding, far tighter than any wrong df, z for t, or n for n - 1.
  double tolerance;
};
Expected t_interval_by_hand(const std::vector<double>& x) {
  const double n = static_cast<double>(x.size());
  double sum = 0, squares = 0;
  for (double v : x) sum += v;
  const double mean = sum / n;
  for (double v : x) squares += (v - mean) * (v - mean);
  const double t975[] = {0, 12.706204736174704, 4.302652729911275};
  const double standard_error = std::sqrt(squares / (n - 1)) / std::sqrt(n);
  return {mean, t975[x.size() - 1] * standard_error, 5e-4 * standard_error + 1e-12};
}

TEST(SweepSeeds, AggregateEqualsTheFormulaAndCountsDivergedAndFailedRuns) {
  using R = RunStatus;
  const std::vector<SweepRow> rows = {
      row({{"optim.lr", "1e-3"}, {"seed", "1"}}, R::Completed, 2.0, 1.9),
      row({{"optim.lr", "1e-3"}, {"seed", "2"}}, R::Completed, 2.5, 2.4),
      row({{"optim.lr", "1e-3"}, {"seed", "3"}}, R::Completed, 2.3, 1.7),
      row({{"optim.lr", "1"}, {"seed", "1"}}, R::Completed, 3.0, 3.0),
      row({{"optim.lr", "1"}, {"seed", "2"}}, R::Diverged, 40.0, 1.0),  // not a sample: its best is not counted
      row({{"optim.lr", "1"}, {"seed", "3"}}, R::Completed, 3.4, 3.3),
      row({{"optim.lr", "1"}, {"seed", "4"}}, R::Failed, 0, 0),
      row({{"optim.lr", "9"}, {"seed", "1"}}, R::Diverged, NAN, NAN),
  };
  const std::vector<SeedAggregate> groups = aggregate_over_seeds(rows);
  ASSERT_EQ(groups.size(), 3u);
  const Expected a = t_interval_by_hand({2.0, 2.5, 2.3}), b = t_interval_by_hand({3.0, 3.4});
  EXPECT_EQ(groups[0].overrides, (std::vector<std::pair<std::string, std::string>>{{"optim.lr", "1e-3"}}));
  EXPECT_EQ(groups[0].seeds, (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(groups[0].n, 3);
  EXPECT_EQ(groups[0].completed, 3);
  EXPECT_NEAR(groups[0].mean_val_loss, a.mean, 1e-12);
  EXPECT_NEAR(groups[0].ci95_low, a.mean - a.half_width, a.tolerance);
  EXPECT_NEAR(groups[0].ci95_high, a.mean + a.half_width, a.tolerance);
  EXPECT_EQ(groups[0].best_val_loss, 1.7);

  EXPECT_EQ(groups[1].n, 4);
  EXPECT_EQ(groups[1].completed, 2);
  EXPECT_EQ(groups[1].diverged, 1);
  EXPECT_EQ(groups[1].failed, 1);
  EXPECT_NEAR(groups[1].mean_val_loss, b.mean, 1e-12);  // 3.2: the diverged run's 40 left out
  EXPECT_NEAR(groups[1].ci95_high - groups[1].ci95_low, 2 * b.half_width, 2 * b.tolerance);
  EXPECT_NEAR(groups[1].ci95_low + groups[1].ci95_high, 2 * b.mean, 1e-12);  // centred on the mean
  EXPECT_EQ(groups[1].best_val_loss, 3.0);

  EXPECT_EQ(groups[2].diverged, 1);  // nothing completed: no mean, no interval, no best
  EXPECT_TRUE(std::isnan(groups[2].mean_val_loss) && std::isnan(groups[2].ci95_low) && std::isnan(groups[2].best_val_loss));

  // The file: one row per configuration, the numbers read back exactly, empty where undefined.
  test::ScratchDir dir;
  const fs::path path = dir.path() / "sweep_seeds.csv";
  write_sweep_seeds_csv(path, rows);
  const CsvTable table = read_csv(path);
  EXPECT_EQ(table.columns, (std::vector<std::string>{"optim.lr", "seeds", "n", "n_completed", "n_diverged", "n_failed",
                                                     "mean_final_val_loss", "ci95_low", "ci95_high", "best_val_loss"}));
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_EQ(table.rows[1][static_cast<size_t>(table.column("mean_final_val_loss"))], groups[1].mean_val_loss);
  EXPECT_EQ(table.rows[1][static_cast<size_t>(table.column("n_diverged"))], 1.0);
  EXPECT_TRUE(std::isnan(table.rows[2][static_cast<size_t>(table.column("ci95_low"))]));
  EXPECT_NE(test::read_text(path).find("1e-3,1 2 3,3,3,0,0,"), std::string::npos) << test::read_text(path);
}

TEST(SweepSeeds, WithoutASeedAxisEachPointIsItsOwnRow) {
  const std::vector<SweepRow> rows = {row({{"optim.lr", "1e-3"}, {"model.norm_placement", "pre"}}, RunStatus::Completed, 2.0, 1.5),
                                      row({{"optim.lr", "1e-3"}, {"model.norm_placement", "post"}}, RunStatus::Completed, 2.2, 2.1)};
  const std::vector<SeedAggregate> groups = aggregate_over_seeds(rows);
  ASSERT_EQ(groups.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(groups[i].n, 1);
    EXPECT_EQ(groups[i].seeds, std::vector<std::string>{"-"});
    EXPECT_EQ(groups[i].mean_val_loss, rows[i].final_val_loss);
    EXPECT_TRUE(std::isnan(groups[i].ci95_low) && std::isnan(groups[i].ci95_high));  // one run: no interval
    EXPECT_EQ(groups[i].best_val_loss, rows[i].best_val_loss);
  }
  // train.seed and model.seed axes count as seeds too.
  const auto by_key = aggregate_over_seeds({row({{"train.seed", "1"}}, RunStatus::Completed, 1, 1),
                                            row({{"train.seed", "2"}}, RunStatus::Completed, 2, 2)});
  ASSERT_EQ(by_key.size(), 1u);
  EXPECT_EQ(by_key[0].n, 2);
  EXPECT_EQ(by_key[0].mean_val_loss, 1.5);
}

// A real sweep writes sweep_seeds.csv beside sweep.csv, from the same rows.
TEST(SweepSeeds, ASweepWritesItBesideSweepCsv) {
  test::TinySweep s;
  const auto rows = run_sweep(s.options(), expand_grid(parse_sweep_axes({"optim.lr=1e-2,1e4", "seed=1,2"})));
  const fs::path out = s.options().out_dir;
  const CsvTable table = read_csv(out / "sweep_seeds.csv");
  ASSERT_EQ(table.rows.size(), 2u);
  const auto at = [&](size_t r, const char* column) { return table.rows[r][static_cast<size_t>(table.column(column))]; };
  EXPECT_EQ(at(0, "n_completed"), 2.0);
  EXPECT_DOUBLE_EQ(at(0, "mean_final_val_loss"), (rows[0].final_val_loss + rows[1].final_val_loss) / 2);
  EXPECT_LT(at(0, "ci95_low"), at(0, "mean_final_val_loss"));
  EXPECT_EQ(at(1, "n_diverged"), 2.0);  // lr 1e4 diverges for both seeds
  EXPECT_TRUE(std::isnan(at(1, "mean_final_val_loss")));
  for (const fs::path& entry : fs::directory_iterator(out))  // written atomically: no temporary left
    EXPECT_EQ(entry.filename().string().find(".tmp."), std::string::npos) << entry;
}

}  // namespace
}  // namespace normlab
