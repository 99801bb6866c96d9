// Plots from synthetic run directories: files are produced, SVGs carry the legend names, and
// missing inputs are named errors.
#include <gtest/gtest.h>

#include <cmath>

#include "core/files.h"
#include "plot/plot.h"
#include "train/run_dir.h"
#include "test_util.h"

namespace normlab {
namespace {

using test::error_of;
using test::ScratchDir;

// A run directory with grad_norms.csv (3 layers, updates 1, 50, ..., 200) and metrics.jsonl.
std::string make_run(const ScratchDir& dir, const std::string& name, double scale) {
  const auto run = prepare_run_dir(dir.file("runs"), name, RunDirMode::fresh).path;
  GradNormWriter grads(run / run_files::kGradNorms);
  for (int step : {1, 50, 100, 150, 200}) {
    std::vector<std::pair<std::string, double>> norms = {{"tok_emb.weight", 0.5}};
    for (int layer = 0; layer < 3; ++layer) {
      norms.emplace_back(fmt::format("blocks.{}.attn.w.weight", layer), scale * (layer + 1));
      norms.emplace_back(fmt::format("blocks.{}.ffn.w2.weight", layer), scale / (layer + 1) / (1 + step));
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
  plot_grad_norms_over_steps(a, dir.file("steps.svg"));
  expect_svg_with(dir.file("steps.svg"), {"layer 0", "layer 1", "layer 2", "run_a"});
  plot_grad_norms_over_steps(a, dir.file("rms.svg"), "residual_rms");  // an extra per-layer column
  expect_svg_with(dir.file("rms.svg"), {"layer 0", "layer 1"});
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
  GradNormWriter(run / run_files::kGradNorms).write(10, {{"blocks.0.ffn.w2.weight", 1.0}});
  EXPECT_NE(error_of([&] { plot_init_grad_norms({run.string()}, dir.file("x.svg")); }).find("no step-1 row"),
            std::string::npos);
}

TEST(Plot, NothingPositiveToDrawOnALogScale) {
  ScratchDir dir;
  const auto run = prepare_run_dir(dir.file("runs"), "zeros", RunDirMode::fresh).path;
  GradNormWriter(run / run_files::kGradNorms).write(1, {{"blocks.0.ffn.w2.weight", 0.0}});
  EXPECT_NE(error_of([&] { plot_init_grad_norms({run.string()}, dir.file("x.svg")); }).find("nothing to draw"),
            std::string::npos);
}

}  // namespace
}  // namespace normlab
