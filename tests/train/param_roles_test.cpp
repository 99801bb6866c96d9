// Parameter roles (issue 54, item 2): what init, the optimizer's weight decay, the learning-rate
// multipliers, the run files' per-layer columns and the dynamics log decide for each parameter of
// every shipped config, every preset and every architecture x placement x norm, against the
// snapshot tests/train/data/param_roles.txt. The snapshot was written by the code before
// roles existed (it parsed parameter names), so an equal snapshot shows that no config's
// decay set, lr-multiplier groups, layer columns or initial values changed.
// Regenerate (only for an intended change, and say so in the commit): NORMLAB_WRITE_SNAPSHOT=1.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/config.h"
#include "nn/placement.h"
#include "nn/presets.h"
#include "nn/transformer.h"
#include "optim/lr_multipliers.h"
#include "optim/optimizer.h"
#include "train/dynamics.h"
#include "train/run_dir.h"

namespace normlab {
namespace {

const std::filesystem::path kSnapshot =
    std::filesystem::path(NORMLAB_SOURCE_DIR) / "tests/train/data/param_roles.txt";

// Small sizes keep every model quick to build; the names and roles do not depend on them.
ModelConfig shrunk(ModelConfig m) {
  m.vocab_size = 32, m.d_model = 16, m.n_heads = 2, m.d_ff = 32, m.context_length = 8;
  m.n_kv_heads = m.n_kv_heads > 0 ? 1 : 0;
  m.head_dim = m.head_dim > 0 ? 8 : 0;
  m.n_experts = std::min<int64_t>(m.n_experts, 3), m.experts_top_k = std::min<int64_t>(m.experts_top_k, 2);
  if (m.padding_idx >= m.vocab_size) m.padding_idx = 0;
  return m;
}

std::string bits(const std::vector<bool>& flags) {
  std::string s;
  for (bool f : flags) s += f ? '1' : '0';
  return s;
}

// One line per parameter: name | decay under (defaults, norms+biases decayed, embeddings decayed)
// | warmup group | layer scale of top_half:2 | grad_norms.csv column | dynamics sub-layer | the
// initial values' root mean square and mean.
std::string describe(const std::string& label, const RunConfig& rc) {
  TransformerLM model(rc.model);
  const auto params = model.named_parameters();
  std::vector<std::string> names;
  std::vector<Var> vars;
  for (const auto& [name, p] : params) names.push_back(name), vars.push_back(p);
  const LrMultiplierSpec top{"top_half:2", "", rc.model.n_layers};
  const std::vector<double> layer_scale =
      rc.model.n_layers >= 2 ? lr_multipliers(vars, top, rc.schedule, 1.0, 0, 10) : std::vector<double>(params.size(), 1.0);
  OptimConfig norms = rc.optim, embeddings = rc.optim;
  norms.decay_norms_and_biases = true, embeddings.decay_embeddings = true;
  std::ostringstream out;
  out << "[" << label << "]\n";
  for (size_t i = 0; i < params.size(); ++i) {
    const Var& p = params[i].second;
    const std::vector<double> v = p.value().to_vector();
    double sum = 0, squares = 0;
    for (double x : v) sum += x, squares += x * x;
    char stats[64];
    std::snprintf(stats, sizeof stats, "%.5g %.3g", std::sqrt(squares / v.size()), sum / v.size());
    out << names[i] << " | "
        << bits({weight_decay_applies(p, rc.optim), weight_decay_applies(p, norms), weight_decay_applies(p, embeddings)})
        << " | " << parameter_group(p) << " | " << layer_scale[i] << " | " << layer_column_of(layer_key_of(p.role()))
        << " | " << (dynamics_sublayer(p.role()).empty() ? "-" : dynamics_sublayer(p.role())) << " | " << stats << "\n";
  }
  return out.str();
}

std::vector<std::pair<std::string, RunConfig>> every_config() {
  std::vector<std::pair<std::string, RunConfig>> out;
  for (const char* folder : {"experiments/configs", "xiong/configs", "bench/configs"}) {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(NORMLAB_SOURCE_DIR) / folder))
      if (e.path().extension() == ".toml") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      RunConfig rc = load_config(f.string());
      rc.model = shrunk(rc.model);
      out.emplace_back(std::string(folder) + "/" + f.filename().string(), rc);
    }
  }
  for (const std::string& preset : preset_names()) {
    RunConfig rc;
    rc.model = shrunk(apply_preset(preset, rc.model));
    out.emplace_back("preset " + preset, rc);
  }
  for (const auto& [arch, arch_name] : EnumNames<ModelArch>::values)
    for (const PlacementKind* placement : placement_kinds())
      for (const NormType norm : {NormType::LayerNorm, NormType::RmsNorm}) {
        RunConfig rc;
        rc.model = shrunk(rc.model);
        rc.model.arch = arch, rc.model.norm_placement = placement->placement, rc.model.norm_type = norm;
        rc.model.qk_norm = norm == NormType::RmsNorm;
        rc.model.tie_embeddings = norm == NormType::LayerNorm;
        rc.model.init = norm == NormType::LayerNorm ? InitScheme::Gpt2 : InitScheme::Xavier;
        out.emplace_back(fmt::format("{} {} {}", arch_name, placement->name, enum_name(norm)), rc);
      }
  return out;
}

TEST(ParamRoles, EveryConfigsDecayGroupsColumnsAndInitAsInTheSnapshot) {
  std::string text;
  for (const auto& [label, rc] : every_config()) text += describe(label, rc);
  if (std::getenv("NORMLAB_WRITE_SNAPSHOT")) {
    std::filesystem::create_directories(kSnapshot.parent_path());
    std::ofstream(kSnapshot) << text;
    GTEST_SKIP() << "wrote " << kSnapshot;
  }
  std::ifstream in(kSnapshot);
  ASSERT_TRUE(in) << kSnapshot;
  const std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream got_lines(text), want_lines(expected);
  std::string got, want;
  for (int line = 1; std::getline(want_lines, want); ++line) {
    ASSERT_TRUE(std::getline(got_lines, got)) << "snapshot line " << line << " missing: " << want;
    ASSERT_EQ(got, want) << "snapshot line " << line;
  }
  EXPECT_FALSE(std::getline(got_lines, got)) << "extra line: " << got;
}

}  // namespace
}  // namespace normlab
