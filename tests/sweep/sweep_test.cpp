// Sweeps: axis parsing, grid order and point names, sweep.csv, and tiny real sweeps run by the
// built normlab binary (a diverging point, a failing point, skipping completed points, --jobs 2).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "command_util.h"
#include "dir_snapshot.h"
#include "config/config.h"
#include "train/run_dir.h"
#include "sweep/sweep.h"
#include "sweep_test_util.h"
#include "test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using test::ScratchDir;
using test::TinySweep;

std::vector<std::string> names_of(const std::vector<SweepPoint>& points) {
  std::vector<std::string> names;
  for (const SweepPoint& p : points) names.push_back(p.name);
  return names;
}

// Equal, or both NaN (losses a diverged run never measured).
bool same_number(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

TEST(SweepAxes, ParsesKeysAndValuesAsWritten) {
  const auto axes = parse_sweep_axes({"optim.lr=5e-4, 1e-3", "model.norm_placement=pre,post",
                                      "data.source=\"a,b.txt\",copy", "seed=1,2"});
  ASSERT_EQ(axes.size(), 4u);
  EXPECT_EQ(axes[0].key, "optim.lr");
  EXPECT_EQ(axes[0].values, (std::vector<std::string>{"5e-4", "1e-3"}));
  EXPECT_EQ(axes[1].values, (std::vector<std::string>{"pre", "post"}));
  EXPECT_EQ(axes[2].values, (std::vector<std::string>{"\"a,b.txt\"", "copy"}));  // a comma inside quotes
  EXPECT_EQ(axes[3].key, "seed");
}

TEST(SweepAxes, ErrorsNameTheArgument) {
  auto message = [](std::vector<std::string> args) { return error_of([&] { parse_sweep_axes(args); }); };
  EXPECT_NE(message({"optim.lr"}).find("[sweep] axis 'optim.lr': expected key=v1,v2"), std::string::npos);
  EXPECT_NE(message({"=1,2"}).find("axis '=1,2'"), std::string::npos);
  EXPECT_NE(message({"lr=1,2"}).find("must be section.key"), std::string::npos);
  EXPECT_NE(message({"optim.lr="}).find("axis 'optim.lr=': value 1 is empty"), std::string::npos);
  EXPECT_NE(message({"optim.lr=1,,2"}).find("value 2 is empty"), std::string::npos);
  EXPECT_NE(message({"optim.lr=1,1"}).find("value '1' is given twice"), std::string::npos);
  EXPECT_NE(message({"data.source=\"x,y"}).find("unterminated"), std::string::npos);
  EXPECT_NE(message({"train.name=a,b"}).find("sets train.name"), std::string::npos);
  EXPECT_NE(message({"seed=1,2", "train.seed=3"}).find("'train.seed' is already swept"), std::string::npos);
  EXPECT_NE(message({"optim.lr=1", "optim.lr=2"}).find("'optim.lr' is already swept"), std::string::npos);
}

TEST(SweepGrid, LastAxisFastestAndNamesFromKeys) {
  const auto points = expand_grid(parse_sweep_axes({"model.norm_placement=pre,post", "optim.lr=5e-4,1e-3,2e-3"}));
  EXPECT_EQ(names_of(points),
            (std::vector<std::string>{"norm_placement=pre,lr=5e-4", "norm_placement=pre,lr=1e-3",
                                      "norm_placement=pre,lr=2e-3", "norm_placement=post,lr=5e-4",
                                      "norm_placement=post,lr=1e-3", "norm_placement=post,lr=2e-3"}));
  ASSERT_EQ(points[4].overrides.size(), 2u);
  EXPECT_EQ(points[4].overrides[0], (std::pair<std::string, std::string>{"model.norm_placement", "post"}));
  EXPECT_EQ(points[4].overrides[1], (std::pair<std::string, std::string>{"optim.lr", "1e-3"}));
}

TEST(SweepGrid, SharedKeyEndingsUseFullKeysAndNamesAreSafe) {
  const auto points = expand_grid(parse_sweep_axes({"model.seed=1", "train.seed=2", "data.source=\"my dir/x.txt\""}));
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].name, "model.seed=1,train.seed=2,source=my_dir_x.txt");
  EXPECT_EQ(expand_grid({}).size(), 1u);
  EXPECT_EQ(expand_grid({})[0].name, "base");
  EXPECT_TRUE(expand_grid({})[0].overrides.empty());
  // Two values that only differ in unsafe characters would share a directory.
  const std::string message = error_of([] { expand_grid(parse_sweep_axes({"data.source=a b,a/b"})); });
  EXPECT_NE(message.find("'source=a_b'"), std::string::npos) << message;
  // A very long name is cut and keeps a hash of the whole, so it stays unique.
  const auto long_points = expand_grid({{"data.source", {std::string(300, 'x') + "1", std::string(300, 'x') + "2"}}});
  EXPECT_LE(long_points[0].name.size(), 255u);
  EXPECT_NE(long_points[0].name, long_points[1].name);
}

TEST(SweepGrid, SeedSetsBothSeeds) {
  const auto points = expand_grid(parse_sweep_axes({"optim.lr=1e-3", "seed=7"}));
  EXPECT_EQ(point_override_texts(points[0]),
            (std::vector<std::string>{"optim.lr=1e-3", "train.seed=7", "model.seed=7"}));
  const RunConfig c = load_config("", point_override_texts(points[0]));
  EXPECT_EQ(c.train.seed, 7u);
  EXPECT_EQ(c.model.seed, 7u);
}

TEST(SweepCsv, RoundTripsNamesWithCommasAndQuotes) {
  ScratchDir dir;
  std::vector<SweepRow> rows(2);
  rows[0].point = {{{"optim.lr", "1e-3"}, {"data.source", "\"a,b\""}}, "lr=1e-3,source=a,b"};
  rows[0].status = RunStatus::Completed;
  rows[0].final_train_loss = 1.25;
  rows[0].final_val_loss = 1.5;
  rows[0].best_val_loss = 1.375;
  rows[0].wall_seconds = 0.1;
  rows[0].run_dir = "runs/x/lr=1e-3,source=a,b";
  rows[1].point = {{{"optim.lr", "1e4"}, {"data.source", "copy"}}, "lr=1e4,source=copy"};
  rows[1].status = RunStatus::Failed;
  rows[1].error = "exit code 2: error: [data] \"x\" not found\nsecond line";
  write_sweep_csv(dir.path() / "sweep.csv", rows);
  const auto back = read_sweep_csv(dir.path() / "sweep.csv");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].point.name, rows[0].point.name);
  EXPECT_EQ(back[0].point.overrides, rows[0].point.overrides);
  EXPECT_EQ(back[0].final_train_loss, 1.25);
  EXPECT_EQ(back[0].best_val_loss, 1.375);
  EXPECT_EQ(back[0].wall_seconds, 0.1);
  EXPECT_EQ(back[0].diverged_step, -1);
  EXPECT_EQ(back[0].run_dir, rows[0].run_dir);
  EXPECT_EQ(back[1].status, RunStatus::Failed);
  EXPECT_EQ(back[1].error, "exit code 2: error: [data] \"x\" not found second line");  // kept on one line
  dir.write("bad.csv", "name,status\nx,completed\n");
  EXPECT_NE(error_of([&] { read_sweep_csv(dir.file("bad.csv")); }).find("bad.csv:1: expected the columns"),
            std::string::npos);
}

// A grid plus an extra arm that sets one more key (the Xiong suite's diagnostic arm): every key is
// a column, and the points that do not set it read back without it.
TEST(SweepCsv, PointsThatSetDifferentKeys) {
  ScratchDir dir;
  std::vector<SweepRow> rows(3);
  rows[0].point = {{{"optim.lr", "1e-3"}, {"seed", "1"}}, "a"};
  rows[1].point = {{{"optim.lr", "1e-3"}, {"seed", "1"}, {"model.embedding_scale", "none"}}, "b"};
  rows[2].point = {{{"seed", "2"}}, "c"};
  for (SweepRow& r : rows) r.status = RunStatus::Pending;
  write_sweep_csv(dir.path() / "sweep.csv", rows);
  const auto back = read_sweep_csv(dir.path() / "sweep.csv");
  ASSERT_EQ(back.size(), 3u);
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(back[i].point.overrides, rows[i].point.overrides) << i;
}

TEST(SweepRun, DivergedPointIsAResultAndRerunSkipsCompletedPoints) {
  TinySweep s;
  SweepOptions options = s.options();
  options.jobs = 2;
  const auto points = expand_grid(parse_sweep_axes({"optim.lr=1e-2,1e4", "seed=1,2"}));
  const std::vector<SweepRow> rows = run_sweep(options, points);
  ASSERT_EQ(rows.size(), 4u);
  std::map<std::string, fs::file_time_type> summary_times;
  for (const SweepRow& row : rows) {
    SCOPED_TRACE(row.point.name + ": " + row.error);
    const bool diverging = row.point.overrides[0].second == "1e4";
    EXPECT_EQ(row.status, diverging ? RunStatus::Diverged : RunStatus::Completed);
    EXPECT_EQ(row.diverged_step >= 0, diverging);
    EXPECT_FALSE(row.skipped);
    EXPECT_EQ(fs::path(row.run_dir), fs::path(options.out_dir) / row.point.name);
    EXPECT_TRUE(is_completed_run(row.run_dir));
    EXPECT_TRUE(fs::exists(fs::path(options.out_dir) / "logs" / (row.point.name + ".txt")));
    if (!diverging) {
      EXPECT_TRUE(std::isfinite(row.final_val_loss) && row.final_val_loss > 0);
    }
    // The run's own config names the sweep's directory and the point, with the point's values.
    const RunConfig saved = load_config((fs::path(row.run_dir) / "config.toml").string());
    EXPECT_EQ(saved.train.name, row.point.name);
    EXPECT_EQ(fs::path(saved.train.out_dir), fs::path(options.out_dir));
    EXPECT_EQ(saved.optim.lr, diverging ? 1e4 : 1e-2);
    EXPECT_EQ(saved.train.seed, saved.model.seed);
    EXPECT_EQ(saved.train.threads, 1);  // jobs > 1: one thread per run
    summary_times[row.point.name] = fs::last_write_time(fs::path(row.run_dir) / "summary.json");
  }
  // sweep.csv holds the same rows.
  const auto csv = read_sweep_csv(fs::path(options.out_dir) / "sweep.csv");
  ASSERT_EQ(csv.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(csv[i].point.name, rows[i].point.name);
    EXPECT_EQ(csv[i].point.overrides, rows[i].point.overrides);
    EXPECT_EQ(csv[i].status, rows[i].status);
    EXPECT_EQ(csv[i].diverged_step, rows[i].diverged_step);
    EXPECT_TRUE(same_number(csv[i].final_val_loss, rows[i].final_val_loss));
    EXPECT_TRUE(same_number(csv[i].best_val_loss, rows[i].best_val_loss));
  }

  // Again: everything is skipped and no summary is rewritten.
  const auto again = run_sweep(options, points);
  for (size_t i = 0; i < again.size(); ++i) {
    EXPECT_TRUE(again[i].skipped);
    EXPECT_EQ(again[i].status, rows[i].status);
    EXPECT_TRUE(same_number(again[i].final_val_loss, rows[i].final_val_loss));
    EXPECT_TRUE(same_number(again[i].final_train_loss, rows[i].final_train_loss));
    EXPECT_EQ(fs::last_write_time(fs::path(again[i].run_dir) / "summary.json"), summary_times[again[i].point.name]);
  }
  // A point without its summary (an interrupted run) is resumed; the others stay skipped.
  fs::remove(fs::path(rows[0].run_dir) / "summary.json");
  const auto third = run_sweep(options, points);
  EXPECT_FALSE(third[0].skipped);
  EXPECT_EQ(third[0].status, RunStatus::Completed);
  EXPECT_EQ(third[0].final_val_loss, rows[0].final_val_loss);  // same config, same seed: same result
  for (size_t i = 1; i < third.size(); ++i) EXPECT_TRUE(third[i].skipped);
}

TEST(SweepRun, FailingPointIsRecordedWithItsLogAndTheOthersRun) {
  TinySweep s;
  const std::string missing = s.dir.file("missing.txt");
  const auto points = expand_grid({{"data.source", {"\"" + missing + "\"", "copy"}}});
  const auto rows = run_sweep(s.options(), points);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].status, RunStatus::Failed);
  EXPECT_NE(rows[0].error.find("exit code 1"), std::string::npos) << rows[0].error;
  EXPECT_NE(rows[0].error.find("missing.txt"), std::string::npos) << rows[0].error;  // the child's message
  EXPECT_EQ(rows[1].status, RunStatus::Completed) << rows[1].error;
  const auto csv = read_sweep_csv(fs::path(s.options().out_dir) / "sweep.csv");
  ASSERT_EQ(csv.size(), 2u);
  EXPECT_EQ(csv[0].status, RunStatus::Failed);
  EXPECT_EQ(csv[0].error, rows[0].error);
  EXPECT_FALSE(is_completed_run(rows[0].run_dir));  // so the next sweep tries it again
}

TEST(SweepRun, FailOnDivergenceExitIsStillADivergence) {
  TinySweep s;
  SweepOptions options = s.options();
  options.fixed_overrides.push_back("train.fail_on_divergence=true");  // the child exits 3
  const auto rows = run_sweep(options, expand_grid(parse_sweep_axes({"optim.lr=1e4"})));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, RunStatus::Diverged) << rows[0].error;
  EXPECT_GE(rows[0].diverged_step, 0);
}

TEST(SweepRun, TypoFailsBeforeAnythingRuns) {
  TinySweep s;
  const std::string typo = error_of([&] {
    run_sweep(s.options(), expand_grid(parse_sweep_axes({"optim.lrr=1e-3,2e-3"})));
  });
  EXPECT_NE(typo.find("override 'optim.lrr=1e-3'"), std::string::npos) << typo;
  EXPECT_NE(typo.find("did you mean 'lr'"), std::string::npos) << typo;
  const std::string bad_value = error_of([&] {
    run_sweep(s.options(), expand_grid(parse_sweep_axes({"optim.lr=1e-3,-1"})));
  });
  EXPECT_NE(bad_value.find("[sweep] point 'lr=-1'"), std::string::npos) << bad_value;
  EXPECT_NE(bad_value.find("override 'optim.lr=-1'"), std::string::npos) << bad_value;
  EXPECT_FALSE(fs::exists(s.options().out_dir));  // not even the sweep directory
  SweepOptions no_binary = s.options();
  no_binary.normlab_binary = s.dir.file("no-such-binary");
  EXPECT_NE(error_of([&] { run_sweep(no_binary, expand_grid({})); }).find("cannot run"), std::string::npos);
  // This test program is not the CLI: run as `PROGRAM train ...` it would run its tests (and this
  // sweep) again, so it must name the CLI.
  SweepOptions own_binary = s.options();
  own_binary.normlab_binary.clear();
  EXPECT_NE(error_of([&] { run_sweep(own_binary, expand_grid({})); }).find("not the normlab command line"),
            std::string::npos);
}

TEST(SweepCommand, ExitCodesProgressAndTable) {
  TinySweep s;
  const std::string out = s.dir.file("cli");
  // --set takes one override each time: the axis after it stays an axis.
  const auto ok = test::run_command(test::kNormlab + " sweep " + s.config + " --set train.divergence_loss=20 " +
                                    "optim.lr=1e-2,1e4 --jobs 2 --out " + out);
  EXPECT_EQ(ok.exit_code, 0) << ok.output;  // a divergence is a result
  EXPECT_NE(ok.output.find("] lr=1e4: diverged at step"), std::string::npos) << ok.output;
  EXPECT_NE(ok.output.find("1 completed, 1 diverged, 0 failed"), std::string::npos) << ok.output;
  EXPECT_EQ(read_sweep_csv(fs::path(out) / "sweep.csv").size(), 2u);

  const auto failed = test::run_command(test::kNormlab + " sweep " + s.config + " data.source=copy,nowhere.txt --out " +
                                        s.dir.file("cli-failed") + " --quiet");
  EXPECT_EQ(failed.exit_code, 1) << failed.output;
  EXPECT_NE(failed.output.find("1 completed, 0 diverged, 1 failed"), std::string::npos) << failed.output;

  const auto typo = test::run_command(test::kNormlab + " sweep " + s.config + " optim.lr=1e-2 --set optim.bta1=0.8 --out " +
                                      s.dir.file("cli-typo"));
  EXPECT_EQ(typo.exit_code, 1) << typo.output;
  EXPECT_NE(typo.output.find("override 'optim.bta1=0.8'"), std::string::npos) << typo.output;
  EXPECT_FALSE(fs::exists(s.dir.file("cli-typo")));
}

// The command a sweep logs for each point starts with the binary's real path (not
// /proc/self/exe) and quotes what needs quoting: pasted into a shell, it runs the point again.
TEST(SweepRun, LoggedCommandsCanBePastedIntoAShell) {
  test::TinySweep s;
  const std::string out = s.dir.file("with space");
  const auto r = test::run_command(test::kNormlab + " sweep " + s.config + " optim.lr=1e-2 --out '" + out + "' --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string log = test::read_text(fs::path(out) / "logs" / "lr=1e-2.txt");
  const std::string marker = "[sweep] $ ";
  const size_t at = log.find(marker);
  ASSERT_NE(at, std::string::npos) << log;
  const std::string command = log.substr(at + marker.size(), log.find('\n', at) - at - marker.size());
  EXPECT_EQ(command.find("/proc/self/exe"), std::string::npos) << command;
  EXPECT_EQ(command.rfind(fs::canonical(test::kNormlab).string() + " train ", 0), 0u) << command;
  EXPECT_NE(command.find("'train.out_dir=\"" + out + "\"'"), std::string::npos) << command;
  const auto again = test::run_command(command + " --overwrite");
  EXPECT_EQ(again.exit_code, 0) << command << "\n" << again.output;
  EXPECT_TRUE(fs::exists(fs::path(out) / "lr=1e-2" / "summary.json"));
}

}  // namespace
}  // namespace normlab
