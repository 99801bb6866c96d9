// Plots from synthetic run directories: files are produced, SVGs carry the legend names, and
// missing inputs are named errors.
#include <gtest/gtest.h>

#include <cmath>

#include "core/files.h"
#include "plot/gnuplot.h"
#include "plot/plot.h"
#include "train/run_dir.h"
#include "test_util.h"

namespace normlab {
namespace {

using test::error_of;
using test::ScratchDir;

// A run directory with grad_norms.csv (3 layers, updates 1, 50, ..., 200) and metrics.jsonl.
std::string make_run(const ScratchDir& dir, const std::string& name, double scale, const std::string& parent = "runs") {
  const auto run = prepare_run_dir(dir.file(parent), name, RunDirMode::fresh).path;
  GradNormWriter grads(run / run_files::kGradNorms);
  for (int step : {1, 50, 100, 150, 200}) {
    std::vector<ParamGradNorm> norms = {{"tok_emb.weight", 0.5, std::nullopt}};
    for (int layer = 0; layer < 3; ++layer) {
      norms.push_back({fmt::format("blocks.{}.attn.w.weight", layer), scale * (layer + 1), LayerKey{0, layer}});
      norms.push_back({fmt::format("blocks.{}.ffn.w2.weight", layer), scale / (layer + 1) / (1 + step), LayerKey{0, layer}});
    }
    grads.write(step, norms, {{"residual_rms.0", 1.0}, {"residual_rms.1", 2.0}});
  }
  MetricsWriter metrics(run / run_files::kMetrics);
  for (int step = 0; step <= 200; step += 10) {
    metrics.write({{"step", step}, {"train_loss", 5.0 * scale * std::exp(-step / 100.0)}});
    if (step % 50 == 0) metrics.write({{"step", step}, {"val_loss", 5.2 * scale * std::exp(-step / 100.0)}});
  }
  return run.string();
}

void expect_svg_with(const std::string& path, const std::vector<std::string>& names) {
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  const std::string svg = read_whole_file(path, "test");
  ASSERT_GT(svg.size(), 0u);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  for (const std::string& name : names) EXPECT_NE(svg.find(name), std::string::npos) << name;
}

TEST(Plot, InitGradNormsOneLinePerRun) {
  ScratchDir dir;
  const std::string a = make_run(dir, "post_ln", 10.0), b = make_run(dir, "pre_ln", 1.0);
  const std::string out = dir.file("plots/init.svg");  // the plots/ directory is created
  plot_init_grad_norms({a, b}, out);
  expect_svg_with(out, {"post_ln", "pre_ln", "ffn.w2.weight", "layer"});
}

TEST(Plot, InitGradNormsOfLayerAggregatesAndBoth) {
  ScratchDir dir;
  const std::string a = make_run(dir, "run_a", 1.0), b = make_run(dir, "run_b", 2.0);
  plot_init_grad_norms({a, b}, dir.file("layer.svg"), "layer");
  expect_svg_with(dir.file("layer.svg"), {"run_a", "run_b"});
  plot_init_grad_norms({a, b}, dir.file("both.svg"), "ffn.w2.weight,layer");
  expect_svg_with(dir.file("both.svg"), {"run_a (ffn.w2.weight)", "run_b (layer)"});
}

TEST(Plot, GradNormsOverStepsOneLinePerLayer) {
  ScratchDir dir;
  const std::string a = make_run(dir, "run_a", 1.0);
  plot_grad_norms_over_steps({a}, dir.file("steps.svg"));
  expect_svg_with(dir.file("steps.svg"), {"layer 1", "layer 2", "layer 3", "run_a"});  // layers count from 1
  EXPECT_EQ(read_whole_file(dir.file("steps.svg"), "test").find("layer 0"), std::string::npos);
  plot_grad_norms_over_steps({a}, dir.file("rms.svg"), "residual_rms");  // an extra per-layer column
  expect_svg_with(dir.file("rms.svg"), {"layer 1", "layer 2"});
}

// Several runs: every run's layers, labelled by run (was: the first run only, silently).
TEST(Plot, GradNormsOverStepsOverlaysEveryRun) {
  ScratchDir dir;
  const std::string a = make_run(dir, "run_a", 1.0), b = make_run(dir, "run_b", 3.0);
  plot_grad_norms_over_steps({a, b}, dir.file("both.svg"));
  expect_svg_with(dir.file("both.svg"), {"run_a: layer 1", "run_a: layer 3", "run_b: layer 1", "run_b: layer 3"});
}

// Two runs of the same name in different sweeps get their parent directory in the label; --label
// replaces the labels, one per run.
TEST(Plot, LabelsTellRunsOfTheSameNameApartAndCanBeGiven) {
  ScratchDir dir;
  const std::string a = make_run(dir, "seed=1", 1.0, "sweep1"), b = make_run(dir, "seed=1", 2.0, "sweep2");
  plot_loss_curves({a, b}, dir.file("same.svg"));
  expect_svg_with(dir.file("same.svg"), {"sweep1/seed=1 train", "sweep2/seed=1 train"});
  plot_loss_curves({a, b}, dir.file("given.svg"), "", false, {"Post-LN", "Pre-LN"});
  expect_svg_with(dir.file("given.svg"), {"Post-LN train", "Pre-LN val"});
  EXPECT_NE(error_of([&] { plot_loss_curves({a, b}, dir.file("x.svg"), "", false, {"one"}); })
                .find("1 --label value(s) for 2 run directories"),
            std::string::npos);
}

// Runs with identical curves (the same initialization) say so instead of hiding one another.
TEST(Plot, IdenticalCurvesAreNamed) {
  ScratchDir dir;
  const std::string a = make_run(dir, "twin_a", 1.0), b = make_run(dir, "twin_b", 1.0);
  plot_init_grad_norms({a, b}, dir.file("init.svg"));
  expect_svg_with(dir.file("init.svg"), {"twin_b (identical to twin_a)"});
  const std::string c = make_run(dir, "other", 2.0);
  plot_init_grad_norms({a, c}, dir.file("apart.svg"));
  EXPECT_EQ(read_whole_file(dir.file("apart.svg"), "test").find("identical"), std::string::npos);
}

// Axes fit the data: a positive loss never gets a negative axis, a log axis is not widened to
// whole decades.
TEST(Plot, FittedRangesStayNearTheData) {
  Chart loss;
  loss.series.push_back({.title = "a", .points = {{0, 4.1}, {100, 2.0}, {200, 2.3}}});
  const auto [low, high] = fitted_y_range(loss);
  EXPECT_GE(low, 0.0);
  EXPECT_LT(low, 2.0);
  EXPECT_GT(high, 4.1);
  EXPECT_LT(high, 4.3);
  Chart converged = loss;  // a loss near 0: padding would reach below it, the axis stops at 0
  converged.series[0].points = {{0, 4.1}, {100, 0.01}};
  EXPECT_EQ(fitted_y_range(converged).first, 0.0);
  Chart grads = loss;
  grads.log_y = true;
  grads.series[0].points = {{1, 0.4}, {2, 1.2}, {3, 0.0}};  // 0 is not drawable on a log axis
  const auto [glow, ghigh] = fitted_y_range(grads);
  EXPECT_GT(glow, 0.3);
  EXPECT_LT(glow, 0.4);
  EXPECT_GT(ghigh, 1.2);
  EXPECT_LT(ghigh, 1.6);
  Chart negative = loss;
  negative.series[0].points = {{0, -1.0}, {1, 1.0}};
  EXPECT_LT(fitted_y_range(negative).first, -1.0);
  Chart empty;
  EXPECT_TRUE(std::isnan(fitted_y_range(empty).first));
}

TEST(Plot, LossCurvesOfSeveralRuns) {
  ScratchDir dir;
  const std::string a = make_run(dir, "run_a", 1.0), b = make_run(dir, "run_b", 2.0);
  plot_loss_curves({a, b}, dir.file("loss.svg"), "my loss chart");
  expect_svg_with(dir.file("loss.svg"), {"run_a train", "run_a val", "run_b train", "run_b val", "my loss chart"});
}

TEST(Plot, PngOutput) {
  ScratchDir dir;
  const std::string a = make_run(dir, "run_a", 1.0);
  plot_loss_curves({a}, dir.file("loss.png"));
  const std::string png = read_whole_file(dir.file("loss.png"), "test");
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
}

TEST(Plot, ErrorsNameWhatIsMissing) {
  ScratchDir dir;
  const std::string a = make_run(dir, "run_a", 1.0);
  const std::string nowhere = dir.file("runs/nowhere");
  EXPECT_NE(error_of([&] { plot_init_grad_norms({a, nowhere}, dir.file("x.svg")); })
                .find("missing " + nowhere + "/grad_norms.csv"),
            std::string::npos);
  EXPECT_NE(error_of([&] { plot_loss_curves({nowhere}, dir.file("x.svg")); })
                .find("missing " + nowhere + "/metrics.jsonl"),
            std::string::npos);
  EXPECT_NE(error_of([&] { plot_init_grad_norms({a}, dir.file("x.svg"), "attn.qkv.weight"); })
                .find("has no column blocks.N.attn.qkv.weight"),
            std::string::npos);
  EXPECT_NE(error_of([&] { plot_init_grad_norms({a}, dir.file("x.jpg")); }).find("use a .svg or .png"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.svg")));
}

TEST(Plot, InitPlotNeedsAStepOneRow) {
  ScratchDir dir;
  const auto run = prepare_run_dir(dir.file("runs"), "late", RunDirMode::fresh).path;
  GradNormWriter(run / run_files::kGradNorms).write(10, {{"blocks.0.ffn.w2.weight", 1.0, LayerKey{0, 0}}});
  EXPECT_NE(error_of([&] { plot_init_grad_norms({run.string()}, dir.file("x.svg")); }).find("no step-1 row"),
            std::string::npos);
}

TEST(Plot, NothingPositiveToDrawOnALogScale) {
  ScratchDir dir;
  const auto run = prepare_run_dir(dir.file("runs"), "zeros", RunDirMode::fresh).path;
  GradNormWriter(run / run_files::kGradNorms).write(1, {{"blocks.0.ffn.w2.weight", 0.0, LayerKey{0, 0}}});
  EXPECT_NE(error_of([&] { plot_init_grad_norms({run.string()}, dir.file("x.svg")); }).find("nothing to draw"),
            std::string::npos);
}

}  // namespace
}  // namespace normlab

namespace normlab {
namespace {

// dynamics.csv of two layers over updates 1..5 in an existing run directory.
void write_dynamics(const std::string& run, double scale) {
  StepCsvWriter csv(std::filesystem::path(run) / run_files::kDynamics, "dynamics");
  for (int step = 1; step <= 5; ++step)
    csv.write(step, {"output_change", "blocks.0.grad.w2", "blocks.1.grad.w2", "blocks.0.attn.entropy"},
              {scale / step, scale, 2 * scale, -0.5});
}

TEST(Plot, DynamicsPerLayerAndWholeModelColumns) {
  ScratchDir dir;
  const std::string a = make_run(dir, "run_a", 1.0), b = make_run(dir, "run_b", 2.0);
  write_dynamics(a, 1.0);
  write_dynamics(b, 2.0);
  plot_dynamics({a, b}, dir.file("w2.svg"), "grad.w2");
  expect_svg_with(dir.file("w2.svg"), {"run_a: layer 1", "run_a: layer 2", "run_b: layer 2"});
  plot_dynamics({a, b}, dir.file("change.svg"), "output_change");
  expect_svg_with(dir.file("change.svg"), {"run_a", "run_b", "output_change"});
  plot_dynamics({a}, dir.file("entropy.svg"), "attn.entropy");  // not positive: a linear axis
  expect_svg_with(dir.file("entropy.svg"), {"layer 1"});
  EXPECT_NE(error_of([&] { plot_dynamics({a}, dir.file("x.svg"), "attn.nothing"); }).find("attn.nothing"),
            std::string::npos);
  const std::string c = make_run(dir, "run_c", 1.0);  // trained without the dynamics log
  EXPECT_NE(error_of([&] { plot_dynamics({c}, dir.file("x.svg"), "grad.w2"); }).find("log.dynamics_steps"),
            std::string::npos);
}

}  // namespace
}  // namespace normlab
