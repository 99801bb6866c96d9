// The Hugging Face reader's errors (unknown model_type, missing or unexpected tensors, wrong shapes,
// unsupported config values: each names the file and the key or tensor), and the writer's round
// trip: HF -> normlab -> HF gives back the fixture's tensors bit for bit, directly and through
// `normlab convert`'s run directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "hf/hf_checkpoint.h"
#include "hf/hf_convert.h"
#include "io/safetensors.h"
#include "hf_test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using testing::hf_fixture_dir;
using test::ScratchDir;

const std::vector<std::string> kFamilies = {"gpt1", "gpt2", "llama", "mistral", "gemma", "mixtral"};

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A copy of a fixture's checkpoint with config.json edited by `edit` (a text replacement).
std::string copy_fixture(const ScratchDir& dir, const std::string& family, const std::string& from = "",
                         const std::string& to = "") {
  const fs::path out = dir.path() / family;
  fs::create_directories(out);
  std::string config = read_text(fs::path(hf_fixture_dir(family)) / "config.json");
  if (!from.empty()) config.replace(config.find(from), from.size(), to);
  std::ofstream(out / "config.json") << config;
  fs::copy_file(fs::path(hf_fixture_dir(family)) / "model.safetensors", out / "model.safetensors");
  return out.string();
}

void expect_same_tensors(const std::string& written_path, const std::string& original_path) {
  const SafetensorsFile written = load_safetensors(written_path), original = load_safetensors(original_path);
  EXPECT_EQ(written.tensors.size(), original.tensors.size());
  for (const auto& [name, t] : original.tensors) {
    ASSERT_TRUE(written.contains(name)) << name;
    EXPECT_EQ(written.get(name).shape(), t.shape()) << name;
    EXPECT_EQ(written.get(name).to_vector(), t.to_vector()) << name;  // bit for bit
  }
}

TEST(HfReader, WriterGivesBackTheFixtureBitForBit) {
  for (const std::string& family : kFamilies) {
    SCOPED_TRACE(family);
    const HfCheckpoint checkpoint = read_hf_checkpoint(hf_fixture_dir(family));
    TransformerLM model(checkpoint.config);
    load_hf_weights(model, checkpoint);
    ScratchDir dir;
    write_hf_checkpoint(dir.file("hf"), checkpoint.model_type, model);
    expect_same_tensors(dir.file("hf/model.safetensors"), hf_fixture_dir(family) + "/model.safetensors");
    std::string type;
    const ModelConfig back = hf_model_config(dir.file("hf/config.json"), ParamDType::Float32, &type);
    EXPECT_EQ(type, checkpoint.model_type);
    EXPECT_EQ(hf_config_json(type, back), hf_config_json(type, checkpoint.config));
  }
}

TEST(HfReader, ConvertToARunDirectoryAndBack) {
  for (const std::string& family : kFamilies) {
    SCOPED_TRACE(family);
    ScratchDir dir;
    const std::string type = convert_hf_to_run(hf_fixture_dir(family), dir.file("run"), ParamDType::Float32);
    EXPECT_EQ(convert_run_to_hf(dir.file("run"), dir.file("hf"), ""), type);  // the family from the structure
    expect_same_tensors(dir.file("hf/model.safetensors"), hf_fixture_dir(family) + "/model.safetensors");
  }
}

TEST(HfReader, UnknownModelTypeNamesTheFileAndTheKnownTypes) {
  ScratchDir dir;
  const std::string path = copy_fixture(dir, "llama", "\"model_type\": \"llama\"", "\"model_type\": \"bert\"");
  EXPECT_EQ(error_of([&] { read_hf_checkpoint(path); }),
            "[hf] " + path + "/config.json: unknown model_type 'bert'; normlab reads openai-gpt, gpt2, llama, "
            "mistral, gemma, mixtral");
}

TEST(HfReader, UnsupportedConfigValueNamesTheKey) {
  ScratchDir dir;
  const std::string path = copy_fixture(dir, "llama", "\"hidden_act\": \"silu\"", "\"hidden_act\": \"relu\"");
  EXPECT_EQ(error_of([&] { read_hf_checkpoint(path); }),
            "[hf] " + path + "/config.json: hidden_act = \"relu\" is not supported (normlab reproduces silu)");
  ScratchDir dir2;
  const std::string missing = copy_fixture(dir2, "gpt2", "\"n_embd\": 64,", "");
  EXPECT_EQ(error_of([&] { read_hf_checkpoint(missing); }),
            "[hf] " + missing + "/config.json: key 'n_embd' is missing");
}

// An integer key holding a fraction, or a number past int64 (found by tests/fuzz/fuzz_hf_config: nlohmann
// truncated 64.5 to 64 and converted 5.6e72 with undefined behaviour), is refused, naming the key.
TEST(HfReader, AnIntegerKeyMustHoldAnIntegerThatFitsAndASizeBePositive) {
  for (const std::string value : {"64.5", "5.6e72", "18446744073709551615"}) {
    ScratchDir dir;
    const std::string path = copy_fixture(dir, "llama", "\"hidden_size\": 64,", "\"hidden_size\": " + value + ",");
    EXPECT_EQ(error_of([&] { hf_model_config(path + "/config.json", ParamDType::Float32); }),
              "[hf] " + path + "/config.json: key 'hidden_size' must be an integer, got " +
                  nlohmann::json::parse(value).dump())
        << value;
  }
  // A size of 0 (found by the same target: "num_key_value_heads": 0 read as normlab's "as many as
  // the query heads"): Hugging Face has no such value.
  ScratchDir dir;
  const std::string path = copy_fixture(dir, "llama", "\"num_key_value_heads\": 2", "\"num_key_value_heads\": 0");
  EXPECT_EQ(error_of([&] { hf_model_config(path + "/config.json", ParamDType::Float32); }),
            "[hf] " + path + "/config.json: key 'num_key_value_heads' must be a positive integer, got 0");
  // A number past double's range: nlohmann's out_of_range, not its parse_error, which escaped.
  ScratchDir dir3;
  const std::string huge = copy_fixture(dir3, "llama", "\"rope_theta\": 5000.0", "\"rope_theta\": 1e99999");
  EXPECT_NE(error_of([&] { hf_model_config(huge + "/config.json", ParamDType::Float32); }).find("invalid JSON"),
            std::string::npos);
}

// Rewrites a fixture's model.safetensors through `edit` of its tensor list.
std::string with_tensors(const ScratchDir& dir, const std::string& family,
                         const std::function<void(std::vector<std::pair<std::string, Tensor>>&)>& edit) {
  const std::string path = copy_fixture(dir, family);
  const SafetensorsFile file = load_safetensors(path + "/model.safetensors");
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const std::string& name : file.names) tensors.emplace_back(name, file.get(name));
  edit(tensors);
  fs::remove(path + "/model.safetensors");
  save_safetensors(path + "/model.safetensors", tensors);
  return path;
}

TEST(HfReader, MissingUnexpectedAndMisshapedTensorsAreNamed) {
  ScratchDir dir;
  const std::string missing = with_tensors(dir, "mistral", [](auto& t) {
    std::erase_if(t, [](const auto& p) { return p.first == "model.layers.1.mlp.up_proj.weight"; });
  });
  EXPECT_EQ(error_of([&] { read_hf_checkpoint(missing); }),
            "[hf] " + missing + "/model.safetensors: tensor 'model.layers.1.mlp.up_proj.weight' is missing "
            "(needed for blocks.1.ffn.w3.weight)");
  ScratchDir dir2;
  const std::string extra = with_tensors(dir2, "gpt2", [](auto& t) {
    t.emplace_back("transformer.h.2.ln_1.weight", Tensor::zeros({64}));
  });
  EXPECT_EQ(error_of([&] { read_hf_checkpoint(extra); }),
            "[hf] " + extra + "/model.safetensors: unexpected tensor 'transformer.h.2.ln_1.weight' (not part of a "
            "gpt2 model with this config)");
  ScratchDir dir3;
  const std::string shape = with_tensors(dir3, "gemma", [](auto& t) {
    for (auto& [name, tensor] : t)
      if (name == "model.layers.0.self_attn.k_proj.weight") tensor = Tensor::zeros({128, 64});
  });
  EXPECT_EQ(error_of([&] { read_hf_checkpoint(shape); }),
            "[hf] " + shape + "/model.safetensors: tensor 'model.layers.0.self_attn.k_proj.weight' has shape "
            "(128, 64) but (64, 64) is expected");
}

TEST(HfReader, AFamilyThatCannotExpressTheModelSaysWhy) {
  ModelConfig c = read_hf_checkpoint(hf_fixture_dir("llama")).config;
  c.norm_type = NormType::LayerNorm;
  EXPECT_EQ(error_of([&] { hf_config_json("llama", c); }),
            "[hf] model_type 'llama' cannot express norm_type = layernorm (it has rmsnorm)");
}

TEST(HfReader, MixtralConfigAndExperts) {
  const HfCheckpoint checkpoint = read_hf_checkpoint(hf_fixture_dir("mixtral"));
  const ModelConfig& c = checkpoint.config;
  EXPECT_EQ(c.ffn_type, FfnType::Moe);
  EXPECT_EQ(c.n_experts, 4);
  EXPECT_EQ(c.experts_top_k, 2);
  EXPECT_EQ(c.router_aux_loss_coef, 0.0);  // output_router_logits false: HF's loss has no aux term
  EXPECT_EQ(c.sliding_window, 0);          // null
  EXPECT_EQ(c.rope_theta, 1e6);
  EXPECT_EQ(c.norm_eps, 1e-5);
  EXPECT_EQ(c.n_kv_heads, 2);
  ScratchDir dir;
  const std::string aux = copy_fixture(dir, "mixtral", "\"output_router_logits\": false",
                                       "\"output_router_logits\": true");
  const ModelConfig with_aux = read_hf_checkpoint(aux).config;
  EXPECT_EQ(with_aux.router_aux_loss_coef, 0.001);
  EXPECT_NE(hf_config_json("mixtral", with_aux).find("\"output_router_logits\": true"), std::string::npos);
  // Fewer experts in config.json than in the file: the router's shape says so.
  ScratchDir dir2;
  const std::string fewer = copy_fixture(dir2, "mixtral", "\"num_local_experts\": 4", "\"num_local_experts\": 3");
  EXPECT_EQ(error_of([&] { read_hf_checkpoint(fewer); }),
            "[hf] " + fewer + "/model.safetensors: tensor 'model.layers.0.block_sparse_moe.gate.weight' has shape "
            "(4, 64) but (3, 64) is expected");
  // A mixtral model is not a mistral one.
  EXPECT_EQ(error_of([&] { hf_config_json("mistral", c); }),
            "[hf] model_type 'mistral' cannot express ffn_type = moe (it has swiglu)");
}

}  // namespace
}  // namespace normlab
