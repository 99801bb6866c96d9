// train.detect_anomaly: a run that diverges names the first op whose output or gradient held
// inf/NaN in its summary.json and its message, and still ends as a diverged run (a result).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "command_util.h"
#include "config/config.h"
#include "train/run_dir.h"
#include "train/trainer.h"
#include "test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;

struct TinyRun {
  test::ScratchDir dir;
  std::string config_path = dir.write("tiny.toml", test::tiny_config_toml(dir.file("runs")));
  RunConfig config(std::vector<std::string> overrides = {}) const { return load_config(config_path, overrides); }
  fs::path run(const std::string& name) const { return dir.path() / "runs" / name; }
  nlohmann::json summary(const std::string& name) const {
    std::ifstream in(run(name) / "summary.json");
    return nlohmann::json::parse(in);
  }
};

TrainOptions quiet() {
  TrainOptions o;
  o.quiet = true;
  return o;
}

// Adam with lr 1e30 moves every weight by about 1e30 in its first update, so the next forward
// overflows float32.
const char* const kExploding = "optim.lr=1e30";

TEST(TrainerAnomaly, ADivergedRunNamesTheFirstBadOpInSummaryJson) {
  TinyRun t;
  const TrainResult plain = train(t.config({"train.name=plain", kExploding}), quiet());
  const TrainResult named = train(t.config({"train.name=named", kExploding, "train.detect_anomaly=true"}), quiet());
  ASSERT_EQ(plain.status, RunStatus::Diverged);
  EXPECT_FALSE(plain.anomaly.has_value());  // off: no record
  EXPECT_FALSE(t.summary("plain").contains("anomaly"));
  ASSERT_EQ(named.status, RunStatus::Diverged);
  ASSERT_TRUE(named.anomaly.has_value());
  EXPECT_LE(named.steps_done, plain.steps_done);  // it stops at the first inf, the loss shows it no earlier
  EXPECT_GE(named.steps_done, 1);                 // the first step, from the initial weights, is clean
  const AnomalyRecord& r = *named.anomaly;
  EXPECT_EQ(named.reason, r.message());
  EXPECT_EQ(named.reason.rfind("[anomaly] " + r.phase + ": op '" + r.op + "'", 0), 0u) << named.reason;
  const nlohmann::json s = t.summary("named");
  EXPECT_EQ(s["status"], "diverged");
  EXPECT_EQ(s["diverged_at_step"], named.steps_done + 1);
  EXPECT_EQ(s["reason"], named.reason);
  const nlohmann::json& a = s["anomaly"];
  EXPECT_EQ(a["phase"], r.phase);
  EXPECT_EQ(a["op"], r.op);
  EXPECT_EQ(a["scope"], r.scope);
  EXPECT_EQ(a["parameters"], r.parameters);
  EXPECT_EQ(a["inputs"].size(), r.inputs.size());
  EXPECT_EQ(a["output"]["shape"], r.output.shape);
  const nlohmann::json& bad = r.phase == "forward" ? a["output"] : a["gradient"];
  EXPECT_EQ(bad["finite"], false);
  EXPECT_GT(bad["inf"].get<int64_t>() + bad["nan"].get<int64_t>(), 0);
  // The metrics log ends with the same reason, as for any divergence.
  const auto metrics = read_metrics(t.run("named") / "metrics.jsonl");
  ASSERT_FALSE(metrics.empty());
  EXPECT_EQ(metrics.back()["diverged"], named.reason);
  EXPECT_TRUE(is_completed_run(t.run("named")));  // a result: a sweep does not run it again
}

TEST(TrainerAnomaly, TheCliPrintsTheAnomalyAndExitsByTheDivergenceRules) {
  TinyRun t;
  const std::string run = test::kNormlab + " train " + t.config_path + " " + kExploding +
                          " train.detect_anomaly=true --quiet";
  const auto strict = test::run_command(run + " train.name=strict train.fail_on_divergence=true");
  EXPECT_EQ(strict.exit_code, 3) << strict.output;
  EXPECT_NE(strict.output.find("diverged at step"), std::string::npos) << strict.output;
  EXPECT_NE(strict.output.find("[anomaly] "), std::string::npos) << strict.output;
  const auto lenient = test::run_command(run + " train.name=lenient");
  EXPECT_EQ(lenient.exit_code, 0) << lenient.output;
  EXPECT_NE(lenient.output.find("[anomaly] "), std::string::npos) << lenient.output;
}

}  // namespace
}  // namespace normlab
