// Helpers for the in-process trainer tests: a tiny config in a scratch directory, quiet options,
// and the run's summary and metrics read back.
#pragma once
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "command_util.h"
#include "config/config.h"
#include "train/run_dir.h"
#include "nn/transformer.h"
#include "train/trainer.h"
#include "test_util.h"

namespace normlab::test {

struct TinyRun {
  ScratchDir dir;
  std::string config_path = dir.write("tiny.toml", tiny_config_toml(dir.file("runs")));
  RunConfig config(std::vector<std::string> overrides = {}) const { return load_config(config_path, overrides); }
  std::filesystem::path run(const std::string& name) const { return dir.path() / "runs" / name; }
};

// Every parameter's values by name.
using Weights = std::map<std::string, std::vector<double>>;
inline Weights weights_of(const TransformerLM& model) {
  Weights out;
  for (const auto& [name, p] : model.named_parameters()) out[name] = p.value().to_vector();
  return out;
}

inline TrainOptions quiet_options(int64_t stop_after = -1, std::string resume_dir = "") {
  TrainOptions o;
  o.quiet = true;
  o.stop_after = stop_after;
  o.resume_dir = std::move(resume_dir);
  return o;
}

inline nlohmann::json read_summary(const std::filesystem::path& run_dir) {
  std::ifstream in(run_dir / "summary.json");
  return nlohmann::json::parse(in);
}

// metrics.jsonl without the timing column, which differs between runs.
inline std::vector<nlohmann::json> metrics_without_timing(const std::filesystem::path& run_dir) {
  std::vector<nlohmann::json> records = read_metrics(run_dir / "metrics.jsonl");
  for (auto& r : records) r.erase("tokens_per_s");
  return records;
}

}  // namespace normlab::test
