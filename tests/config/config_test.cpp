// Reading and writing run configurations: round trip, overrides, presets.
#include <gtest/gtest.h>

#include "config/config.h"
#include "nn/presets.h"
#include "test_util.h"

namespace normlab {
namespace {

using test::ScratchDir;

TEST(Config, NoFileGivesTheStructDefaults) {
  const RunConfig loaded = load_config("");
  EXPECT_EQ(config_to_toml(loaded), config_to_toml(RunConfig{}));
  EXPECT_EQ(loaded.model.norm_placement, ModelConfig{}.norm_placement);
  EXPECT_EQ(loaded.optim.lr, OptimConfig{}.lr);
}

TEST(Config, ReadsEverySection) {
  ScratchDir dir;
  const std::string path = dir.write("run.toml", R"(
[model]
norm_placement = "post"
n_layers = 6
dropout = 0.1
bias = false
[optim]
name = "adam"
lr = 3e-4
[schedule]
kind = "inverse_sqrt"
warmup_steps = 100
[data]
tokenizer = "byte"
[train]
name = "post_ln"
steps = 500
seed = 7
device = "cpu"
[log]
every = 5
)");
  const RunConfig c = load_config(path);
  EXPECT_EQ(c.model.norm_placement, NormPlacement::Post);
  EXPECT_EQ(c.model.n_layers, 6);
  EXPECT_DOUBLE_EQ(c.model.dropout, 0.1);
  EXPECT_FALSE(c.model.bias);
  EXPECT_EQ(c.optim.name, OptimizerKind::Adam);
  EXPECT_DOUBLE_EQ(c.optim.lr, 3e-4);
  EXPECT_EQ(c.schedule.kind, ScheduleKind::InverseSqrt);
  EXPECT_EQ(c.schedule.warmup_steps, 100);
  EXPECT_EQ(c.data.tokenizer, "byte");
  EXPECT_EQ(c.train.name, "post_ln");
  EXPECT_EQ(c.train.steps, 500);
  EXPECT_EQ(c.train.seed, 7u);
  EXPECT_EQ(c.log.every, 5);
  EXPECT_EQ(c.model.d_model, ModelConfig{}.d_model);  // untouched keys keep their defaults
}

TEST(Config, IntegerAcceptedWhereFloatExpected) {
  ScratchDir dir;
  const RunConfig c = load_config(dir.write("a.toml", "[optim]\nlr = 1\nweight_decay = 0\n"));
  EXPECT_EQ(c.optim.lr, 1.0);
  EXPECT_EQ(c.optim.weight_decay, 0.0);
}

TEST(Config, RoundTripsEveryKeyExactly) {
  RunConfig c;
  c.preset = "";
  c.model.norm_placement = NormPlacement::Sandwich;
  c.model.norm_type = NormType::RmsNorm;
  c.model.norm_eps = 1e-6;
  c.model.dropout = 0.1;
  c.model.seed = 12345678901234ull;
  c.optim.lr = 3e-4;
  c.optim.beta2 = 0.98;
  c.optim.eps = 1e-9;
  c.optim.grad_clip = 1.0;
  c.schedule.kind = ScheduleKind::Cosine;
  c.schedule.min_lr = 1e-5;
  c.data.source = "some dir/with \"quotes\" and \\ backslash.txt";
  c.train.name = "x_1";
  c.train.divergence_loss = 123.456;
  c.train.threads = 3;
  c.train.fail_on_divergence = true;
  ScratchDir dir;
  const std::string text = config_to_toml(c);
  const RunConfig back = load_config(dir.write("written.toml", text));
  EXPECT_EQ(config_to_toml(back), text);
  EXPECT_EQ(back.model.seed, c.model.seed);
  EXPECT_EQ(back.optim.lr, c.optim.lr);  // bit-exact doubles
  EXPECT_EQ(back.optim.eps, c.optim.eps);
  EXPECT_EQ(back.train.divergence_loss, c.train.divergence_loss);
  EXPECT_EQ(back.data.source, c.data.source);
  EXPECT_TRUE(back.train.fail_on_divergence);
}

TEST(Config, WritesEveryKey) {
  const std::string text = config_to_toml(RunConfig{});
  for (const std::string& key : config_key_names()) {
    const std::string name = key.substr(key.find('.') + 1);
    EXPECT_NE(text.find("\n" + name + " = "), std::string::npos) << key;
  }
  for (const char* section : {"[model]", "[optim]", "[schedule]", "[data]", "[train]", "[log]"})
    EXPECT_NE(text.find(section), std::string::npos) << section;
}

TEST(Config, OverridesApplyAfterTheFile) {
  ScratchDir dir;
  const std::string path = dir.write("a.toml", "[optim]\nlr = 1e-3\n[model]\nnorm_placement = \"pre\"\n");
  const RunConfig c = load_config(path, {"optim.lr=3e-4", "model.norm_placement=post", "train.name=2024",
                                         "model.bias=false", "train.device = \"cpu\"", "log.every=2"});
  EXPECT_DOUBLE_EQ(c.optim.lr, 3e-4);
  EXPECT_EQ(c.model.norm_placement, NormPlacement::Post);  // a bare word is a string
  EXPECT_EQ(c.train.name, "2024");             // a string key takes the text as written
  EXPECT_FALSE(c.model.bias);
  EXPECT_EQ(c.train.device, Device::cpu());
  EXPECT_EQ(c.log.every, 2);
}

TEST(Config, LaterOverrideWins) {
  const RunConfig c = load_config("", {"train.steps=10", "train.steps=20"});
  EXPECT_EQ(c.train.steps, 20);
}

TEST(Config, PresetThenKeysOverride) {
  ScratchDir dir;
  const std::string path =
      dir.write("p.toml", "preset = \"llama\"\n[model]\nn_layers = 2\nnorm_eps = 1e-5\n");
  const RunConfig c = load_config(path);
  ModelConfig expected = apply_preset("llama", ModelConfig{});
  expected.n_layers = 2;
  expected.norm_eps = 1e-5;
  EXPECT_EQ(c.preset, "llama");
  EXPECT_EQ(c.model.norm_type, expected.norm_type);
  EXPECT_EQ(c.model.ffn_type, expected.ffn_type);
  EXPECT_EQ(c.model.bias, expected.bias);
  EXPECT_EQ(c.model.tie_embeddings, expected.tie_embeddings);
  EXPECT_EQ(c.model.n_layers, 2);
  EXPECT_EQ(c.model.norm_eps, 1e-5);
}

TEST(Config, PresetOverrideReplacesTheFilesPresetAndKeysStillWin) {
  ScratchDir dir;
  const std::string path = dir.write("p.toml", "preset = \"llama\"\n[model]\nnorm_placement = \"post\"\n");
  const RunConfig c = load_config(path, {"preset=gpt2", "model.ffn_type=relu"});
  const ModelConfig gpt2 = apply_preset("gpt2", ModelConfig{});
  EXPECT_EQ(c.preset, "gpt2");
  EXPECT_EQ(c.model.norm_type, gpt2.norm_type);
  EXPECT_EQ(c.model.init, gpt2.init);
  EXPECT_EQ(c.model.norm_placement, NormPlacement::Post);  // file key over the preset
  EXPECT_EQ(c.model.ffn_type, FfnType::Relu);        // override over both
}

// A key the file or the command line sets explicitly wins over the preset, and each one that changes
// a family key of the preset is named on stderr, once, with both values. (It used to be silent:
// preset = "llama" with char_small.toml trained LayerNorm + GELU without a word.)
TEST(Config, ExplicitKeysOverThePresetAreReported) {
  ScratchDir dir;
  const std::string path = dir.write("p.toml", "preset = \"llama\"\n[model]\nnorm_type = \"layernorm\"\n"
                                               "norm_placement = \"pre\"\nd_model = 32\n");
  ::testing::internal::CaptureStderr();
  const RunConfig c = load_config(path, {"model.ffn_type=gelu"});
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(c.model.norm_type, NormType::LayerNorm);
  EXPECT_EQ(c.model.ffn_type, FfnType::Gelu);
  EXPECT_EQ(c.model.position_embedding, PositionEmbedding::Rope);  // the preset's, not overridden
  EXPECT_EQ(said, path + ":3: model.norm_type = \"layernorm\" overrides preset 'llama' (which sets \"rmsnorm\")\n"
                  "override 'model.ffn_type=gelu': model.ffn_type = \"gelu\" overrides preset 'llama' (which sets "
                  "\"swiglu\")\n");  // norm_placement equals the preset's and d_model is not a family key
}

TEST(Config, CharSmallWithTheLlamaPresetSaysWhatItKeeps) {
  const std::string path = std::string(NORMLAB_SOURCE_DIR) + "/experiments/configs/char_small.toml";
  ::testing::internal::CaptureStderr();
  const RunConfig c = load_config(path, {"preset=llama"});
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(c.model.norm_type, NormType::LayerNorm);
  for (const char* key : {"model.norm_type = \"layernorm\"", "model.ffn_type = \"gelu\"", "model.init = \"gpt2\""})
    EXPECT_NE(said.find(key), std::string::npos) << key << " in: " << said;
  // The resolved config read back says nothing new only where nothing differs from the preset.
  ::testing::internal::CaptureStderr();
  load_config("", {"preset=llama"});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(Config, RoundTripWithPreset) {
  ScratchDir dir;
  const RunConfig c = load_config(dir.write("p.toml", "preset = \"gemma\"\n[train]\nsteps = 3\n"));
  const std::string text = config_to_toml(c);
  EXPECT_NE(text.find("preset = \"gemma\""), std::string::npos);
  EXPECT_EQ(config_to_toml(load_config(dir.write("back.toml", text))), text);
}

TEST(Config, ShippedConfigsLoad) {
  int found = 0;
  const std::filesystem::path dir = std::filesystem::path(NORMLAB_SOURCE_DIR) / "experiments/configs";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".toml") continue;
    ++found;
    EXPECT_NO_THROW(load_config(entry.path().string())) << entry.path();
  }
  EXPECT_GT(found, 0);
}


// The fingerprint text lists every key whose value is not zero-like and no other: a key added later
// with an "off" default cannot change the fingerprints of runs made before it existed.
TEST(ConfigFingerprint, ListsExactlyTheKeysWithNonZeroValues) {
  const RunConfig c;
  const std::string text = config_fingerprint_text(c);
  EXPECT_NE(text.find("\noptim.lr = "), std::string::npos) << text;
  EXPECT_NE(text.find("\nmodel.n_layers = "), std::string::npos) << text;
  for (const char* zero : {"optim.weight_decay = ", "optim.grad_clip = ", "train.fail_on_divergence = ",
                           "train.checkpoint_every = ", "model.dropout = "})
    EXPECT_EQ(text.find(std::string("\n") + zero), std::string::npos) << zero << " is zero-like:\n" << text;
  for (const char* where : {"train.name", "train.out_dir", "train.threads", "log.tensorboard"})
    EXPECT_EQ(text.find(std::string("\n") + where + " = "), std::string::npos) << where;
}

// Whatever changes what a run computes changes the fingerprint, a value set to zero or from zero
// included; where it goes and how many threads it uses do not.
TEST(ConfigFingerprint, ChangesWithEveryComputedValueOnly) {
  const std::string base = config_fingerprint(load_config("", {}));
  for (const char* computed : {"optim.weight_decay=0.1", "train.fail_on_divergence=true", "model.dropout=0.1",
                               "schedule.warmup_steps=10", "optim.beta1=0", "optim.lr=0.002", "train.seed=7"})
    EXPECT_NE(config_fingerprint(load_config("", {computed})), base) << computed;
  for (const char* placement : {"train.name=other", "train.out_dir=/tmp/x", "train.threads=2", "log.tensorboard=true"})
    EXPECT_EQ(config_fingerprint(load_config("", {placement})), base) << placement;
}

}  // namespace
}  // namespace normlab
