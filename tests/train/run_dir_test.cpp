// Run directories: creation rules, metrics.jsonl, grad_norms.csv layout, summary.json.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "train/run_dir.h"
#include "test_util.h"

namespace normlab {
namespace {

using test::error_of;
using test::ScratchDir;

std::vector<std::string> lines_of(const std::filesystem::path& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(RunDir, FreshRunCreatesTheDirectoryAndRefusesACompletedOne) {
  ScratchDir dir;
  const std::string out = dir.file("runs");
  const auto run = prepare_run_dir(out, "a", RunDirMode::fresh).path;
  EXPECT_TRUE(std::filesystem::is_directory(run));
  EXPECT_EQ(run, std::filesystem::path(out) / "a");
  EXPECT_NO_THROW(prepare_run_dir(out, "a", RunDirMode::fresh));  // still empty (its lock file aside)
  write_summary(run, {{"status", "completed"}, {"final_train_loss", 1.5}});
  EXPECT_TRUE(is_completed_run(run));
  const std::string message = error_of([&] { prepare_run_dir(out, "a", RunDirMode::fresh); });
  EXPECT_NE(message.find("[run_dir] '" + run.string() + "' already holds a completed run"), std::string::npos)
      << message;
  EXPECT_NE(message.find("--overwrite"), std::string::npos) << message;
  EXPECT_NO_THROW(prepare_run_dir(out, "a", RunDirMode::resume));  // resuming is allowed
}

TEST(RunDir, StoppedRunIsNotCompletedButNotEmptyEither) {
  ScratchDir dir;
  const auto run = prepare_run_dir(dir.file("runs"), "s", RunDirMode::fresh).path;
  write_summary(run, {{"status", "stopped"}});
  EXPECT_FALSE(is_completed_run(run));
  const std::string message = error_of([&] { prepare_run_dir(dir.file("runs"), "s", RunDirMode::fresh); });
  EXPECT_NE(message.find("already holds an unfinished run (summary.json)"), std::string::npos) << message;
  EXPECT_NE(message.find("--resume " + run.string()), std::string::npos) << message;
}

TEST(RunDir, ResumeNeedsAnExistingDirectory) {
  ScratchDir dir;
  EXPECT_NE(error_of([&] { prepare_run_dir(dir.file("runs"), "missing", RunDirMode::resume); }).find("cannot resume"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.file("runs")));
}

TEST(RunDir, MetricsAreJsonLinesAndResumeDropsLaterSteps) {
  ScratchDir dir;
  const auto path = dir.path() / "metrics.jsonl";
  {
    MetricsWriter metrics(path);
    metrics.write({{"step", 0}, {"train_loss", 5.5}, {"lr", 1e-3}});
    EXPECT_EQ(lines_of(path).size(), 1u);  // flushed at once
    metrics.write({{"step", 10}, {"train_loss", std::numeric_limits<double>::quiet_NaN()}});
    metrics.write({{"step", 20}, {"val_loss", 4.0}});
  }
  std::vector<nlohmann::json> records = read_metrics(path);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0]["train_loss"].get<double>(), 5.5);
  EXPECT_TRUE(records[1]["train_loss"].is_null());  // NaN is written as null
  EXPECT_EQ(records[2]["val_loss"].get<double>(), 4.0);

  { std::ofstream(path, std::ios::app) << "{\"step\": 30, \"train_lo"; }  // a crash mid-line
  EXPECT_EQ(read_metrics(path).size(), 3u);  // a cut-off last line is ignored
  {
    MetricsWriter resumed(path, 10);
    resumed.write({{"step", 11}, {"train_loss", 3.0}});
  }
  records = read_metrics(path);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0]["step"], 0);
  EXPECT_EQ(records[1]["step"], 10);
  EXPECT_EQ(records[2]["step"], 11);
  { MetricsWriter fresh(path); }
  EXPECT_TRUE(read_metrics(path).empty());
}

TEST(RunDir, LayerKeysAndColumnsComeFromTheRole) {
  EXPECT_EQ(layer_key_of(ParamRole{.layer = 3}), (LayerKey{0, 3}));
  EXPECT_EQ(layer_key_of(ParamRole{.stack = LayerStack::Encoder, .layer = 0}), (LayerKey{1, 0}));
  EXPECT_EQ(layer_key_of(ParamRole{.stack = LayerStack::Decoder, .layer = 2}), (LayerKey{2, 2}));
  EXPECT_FALSE(layer_key_of(ParamRole{.group = ParamGroup::Norms}).has_value());  // a final norm
  EXPECT_EQ(layer_column_of(LayerKey{0, 3}), "layer.3");
  EXPECT_EQ(layer_column_of(LayerKey{1, 3}), "encoder.layer.3");
  EXPECT_EQ(layer_column_of(LayerKey{2, 3}), "decoder.layer.3");
  EXPECT_EQ(layer_column_of(std::nullopt), "");
  EXPECT_EQ(block_prefix(LayerKey{2, 3}), "decoder.3.");
}

TEST(RunDir, EncoderAndDecoderLayersGetColumnsOfTheirOwn) {
  // Encoder layer 0 and decoder layer 0 are summed apart; the encoder's columns come first.
  const std::vector<ParamGradNorm> norms = {{"tok_emb.weight", 1.0, std::nullopt},
                                            {"decoder.0.ffn.w2.weight", 2.0, LayerKey{2, 0}},
                                            {"encoder.0.ffn.w2.weight", 3.0, LayerKey{1, 0}},
                                            {"encoder.0.attn.q.weight", 4.0, LayerKey{1, 0}},
                                            {"encoder.1.ffn.w2.weight", 12.0, LayerKey{1, 1}}};
  const std::vector<std::string> columns = grad_norm_columns(norms);
  const std::vector<std::string> layers(columns.begin() + 6, columns.end());
  EXPECT_EQ(fmt::format("{}", fmt::join(layers, " ")), "encoder.layer.0 encoder.layer.1 decoder.layer.0 global");
  const std::vector<double> values = grad_norm_values(norms);
  ASSERT_EQ(values.size(), 9u);
  EXPECT_DOUBLE_EQ(values[5], 5.0);   // encoder.layer.0 = sqrt(3^2 + 4^2)
  EXPECT_DOUBLE_EQ(values[6], 12.0);  // encoder.layer.1
  EXPECT_DOUBLE_EQ(values[7], 2.0);   // decoder.layer.0
  EXPECT_DOUBLE_EQ(values[8], std::sqrt(174.0));  // global = sqrt(1 + 4 + 9 + 16 + 144)
}

TEST(RunDir, GradNormsCsvLayout) {
  ScratchDir dir;
  const auto path = dir.path() / "grad_norms.csv";
  const std::vector<ParamGradNorm> step0 = {
      {"tok_emb.weight", 1.0, std::nullopt},           {"blocks.0.attn.w.weight", 3.0, LayerKey{0, 0}},
      {"blocks.0.ffn.w2.weight", 4.0, LayerKey{0, 0}},  {"blocks.1.ffn.w2.weight", 0.0, LayerKey{0, 1}},
      {"blocks.10.ffn.w2.weight", 2.0, LayerKey{0, 10}}, {"final_norm.weight", 0.5, std::nullopt}};
  std::vector<ParamGradNorm> step50 = step0;
  for (ParamGradNorm& p : step50) p.norm *= 2;
  {
    GradNormWriter writer(path);
    const std::vector<std::string> zero = writer.write(0, step0, {{"residual_rms.0", 1.25}});
    EXPECT_EQ(zero, std::vector<std::string>{"blocks.1.ffn.w2.weight"});
    writer.write(50, step50, {{"residual_rms.0", 2.5}});
    std::vector<ParamGradNorm> changed = step0;
    changed.pop_back();
    EXPECT_NE(error_of([&] { writer.write(100, changed, {{"residual_rms.0", 1.0}}); })
                  .find("the parameter list must not change"),
              std::string::npos);
  }
  const std::vector<std::string> lines = lines_of(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "step,tok_emb.weight,blocks.0.attn.w.weight,blocks.0.ffn.w2.weight,blocks.1.ffn.w2.weight,"
            "blocks.10.ffn.w2.weight,final_norm.weight,layer.0,layer.1,layer.10,global,residual_rms.0");
  // layer.0 = sqrt(3^2 + 4^2) = 5; global = sqrt(1 + 9 + 16 + 0 + 4 + 0.25) = 5.5
  EXPECT_EQ(lines[1], "0,1,3,4,0,2,0.5,5,0,2,5.5,1.25");
  EXPECT_EQ(lines[2], "50,2,6,8,0,4,1,10,0,4,11,2.5");

  const CsvTable table = read_csv(path);
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.column("layer.10"), 9);
  EXPECT_EQ(table.column("missing"), -1);
  EXPECT_EQ(table.rows[1][table.column("global")], 11.0);
}

TEST(RunDir, GradNormsResumeKeepsHeaderAndEarlierRows) {
  ScratchDir dir;
  const auto path = dir.path() / "grad_norms.csv";
  const std::vector<ParamGradNorm> norms = {{"blocks.0.w", 1.0, LayerKey{0, 0}}};
  {
    GradNormWriter writer(path);
    writer.write(0, norms);
    writer.write(50, norms);
    writer.write(100, norms);
  }
  {
    GradNormWriter resumed(path, 50);
    resumed.write(60, norms);
    EXPECT_NE(error_of([&] { resumed.write(70, {{"blocks.0.other", 1.0, LayerKey{0, 0}}}); }).find("must not change"),
              std::string::npos);
  }
  const std::vector<std::string> lines = lines_of(path);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "step,blocks.0.w,layer.0,global");
  EXPECT_EQ(lines[1].substr(0, 2), "0,");
  EXPECT_EQ(lines[2].substr(0, 3), "50,");
  EXPECT_EQ(lines[3].substr(0, 3), "60,");
}

TEST(RunDir, SummaryIsJson) {
  ScratchDir dir;
  write_summary(dir.path(), {{"status", "diverged"}, {"step", 12}, {"loss", std::nan("")}});
  std::ifstream in(dir.path() / "summary.json");
  const nlohmann::json summary = nlohmann::json::parse(in);
  EXPECT_EQ(summary["status"], "diverged");
  EXPECT_EQ(summary["step"], 12);
  EXPECT_TRUE(summary["loss"].is_null());
  EXPECT_TRUE(is_completed_run(dir.path()));
}

}  // namespace
}  // namespace normlab
