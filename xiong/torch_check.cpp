#include "xiong/torch_check.h"

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "config/config.h"
#include "io/safetensors.h"
#include "nn/transformer.h"
#include "xiong/experiments.h"
#include "xiong/probes.h"

namespace fs = std::filesystem;

namespace normlab::xiong {

namespace {

// One model of the check: which probe it replays and normlab's own measurement of it.
struct Case {
  std::string probe, placement, file;  // probe: "E1" | "E2"
  int64_t layers = 0;
  int seed = 0;
  LayerGrads normlab;
};

// Writes the model's initial weights and the probe's batches, with the config as metadata.
void export_case(const ModelConfig& c, const ProbeBatch& probe, uint64_t data_seed, const fs::path& path) {
  TransformerLM model(c);
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const auto& [name, p] : model.named_parameters()) tensors.emplace_back("param." + name, p.value());
  int b = 0;
  for (const auto& [ids, targets] : probe_batches(c.vocab_size, probe, data_seed)) {
    tensors.emplace_back(fmt::format("ids.{}", b), ids);
    tensors.emplace_back(fmt::format("targets.{}", b++), targets);
  }
  RunConfig rc;
  rc.model = c;
  save_safetensors(path.string(), tensors, {{"config", config_to_toml(rc)}});
}

std::vector<Case> export_cases(const Context& ctx, const fs::path& dir) {
  const Grids& g = ctx.grids;
  const ModelConfig base = probe_model(ctx);
  std::vector<Case> cases;
  auto add = [&](const std::string& probe_id, const std::vector<int64_t>& depths, const ProbeBatch& probe,
                 uint64_t seed_offset) {
    for (const std::string placement : {"post", "pre"})
      for (const int64_t L : depths)
        for (int seed = 1; seed <= g.torch_seeds; ++seed) {
          const ModelConfig c = probe_model(base, placement, L, seed);
          Case k{probe_id, placement, fmt::format("{}_{}_L{}_s{}.safetensors", probe_id, placement, L, seed), L, seed, {}};
          export_case(c, probe, seed_offset + static_cast<uint64_t>(seed), dir / k.file);
          k.normlab = measure_layer_grads(c, probe, seed_offset + static_cast<uint64_t>(seed));
          cases.push_back(k);
        }
  };
  add("E1", g.e1_depths, g.e1_probe, 1000);  // the data seeds of e1_theorem1.cpp and e2_profile.cpp
  add("E2", g.e2_depths, g.e2_probe, 2000);
  return cases;
}

double rel_diff(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-30); }

// Worst relative difference over layers of the four measures.
double worst_profile_diff(const LayerGrads& n, const nlohmann::json& t) {
  double worst = 0;
  auto compare = [&](const std::vector<double>& ours, const char* key) {
    const std::vector<double> theirs = t.at(key).get<std::vector<double>>();
    for (size_t l = 0; l < ours.size() && l < theirs.size(); ++l) worst = std::max(worst, rel_diff(ours[l], theirs[l]));
  };
  compare(n.w1_mean_norm, "w1_mean");
  compare(n.w1_norm_of_mean, "w1_nom");
  compare(n.w2_mean_norm, "w2_mean");
  compare(n.w2_norm_of_mean, "w2_nom");
  return worst;
}

nlohmann::json compute(const Context& ctx, const fs::path& script) {
  const fs::path dir = ctx.out_dir / "torch_check";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::vector<Case> cases = export_cases(ctx, dir);
  const std::string command = fmt::format("/usr/bin/python3 '{}' '{}' > '{}' 2>&1", script.string(), dir.string(),
                                          (dir / "torch_probe.log").string());
  if (std::system(command.c_str()) != 0)
    return {{"error", fmt::format("{} failed; see {}", command, (dir / "torch_probe.log").string())}};
  std::ifstream in(dir / "torch_results.json");
  const nlohmann::json torch = nlohmann::json::parse(in);
  nlohmann::json rows = nlohmann::json::array();
  for (const Case& k : cases) {
    const nlohmann::json& t = torch.at(k.file);
    rows.push_back({{"probe", k.probe}, {"placement", k.placement}, {"layers", k.layers}, {"seed", k.seed},
                    {"normlab", k.normlab.w2_mean_norm.back()},
                    {"torch", t.at("w2_mean").back().get<double>()},
                    {"worst_profile", worst_profile_diff(k.normlab, t)}});
  }
  return {{"rows", rows}};
}

}  // namespace

Section run_torch_check(const Context& ctx) {
  Section s{"X1", "Independent check: the init-time probes recomputed by PyTorch", "", {}};
  const fs::path script = ctx.source_dir / "bench" / "torch_probe.py";
  if (ctx.grids.torch_seeds <= 0) {
    s.markdown = "Not run in this grid (`--quick`); the full suite runs it.\n";
    return s;
  }
  if (std::system("/usr/bin/python3 -c 'import torch' > /dev/null 2>&1") != 0 || !fs::exists(script)) {
    s.markdown = fmt::format("Not run: /usr/bin/python3 cannot import torch (apt-get install python3-torch) or {} "
                             "is missing.\n", script.string());
    return s;
  }
  RunConfig key_config;
  key_config.model = probe_model(ctx);
  const nlohmann::json key = {{"model", config_fingerprint_text(key_config)}, {"e1", ctx.grids.e1_depths},
                              {"e2", ctx.grids.e2_depths}, {"seeds", ctx.grids.torch_seeds}, {"version", 1}};
  const nlohmann::json data = cached(ctx, "torch_check", key, [&] { return compute(ctx, script); });
  if (data.contains("error")) {
    s.markdown = "Not completed: " + data["error"].get<std::string>() + "\n";
    return s;
  }
  std::vector<std::vector<std::string>> rows;
  double worst = 0;
  for (const auto& r : data["rows"]) {
    const double d = rel_diff(r["normlab"].get<double>(), r["torch"].get<double>());
    worst = std::max({worst, d, r["worst_profile"].get<double>()});
    rows.push_back({r["probe"].get<std::string>(), placement_label(r["placement"].get<std::string>()),
                    std::to_string(r["layers"].get<int64_t>()), std::to_string(r["seed"].get<int>()),
                    num(r["normlab"].get<double>(), 6), num(r["torch"].get<double>(), 6), num(d, 2),
                    num(r["worst_profile"].get<double>(), 2)});
  }
  s.markdown = fmt::format(
      "bench/torch_probe.py rebuilds each probe model in PyTorch (bench/torch_model.py, an implementation written "
      "independently of normlab's autograd), loads normlab's initial weights and replays the same random-token "
      "batches, {} seed(s) per depth. Columns: the last layer's ||dL/dW2||_F (mean over batches) from both, their "
      "relative difference, and the worst relative difference over every layer of the per-layer profile (W1 and W2, "
      "mean of norms and norm of the mean). **Worst relative difference: {}** ({} the 5% agreement the suite "
      "requires).\n\n",
      ctx.grids.torch_seeds, num(worst, 2), worst <= 0.05 ? "within" : "NOT within");
  s.markdown += md_table({"probe", "placement", "L", "seed", "normlab", "PyTorch", "rel. diff", "worst over the "
                          "profile"}, rows) + "\n";
  return s;
}

}  // namespace normlab::xiong
