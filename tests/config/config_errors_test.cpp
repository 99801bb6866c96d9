// Config errors: each names the file and line (or the override) and the key, before anything runs.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cctype>
#include <filesystem>

#include <fmt/ranges.h>

#include "command_util.h"
#include "config/config.h"
#include "nn/norm_kinds.h"
#include "test_util.h"

namespace normlab {
namespace {

using test::error_of;
using test::ScratchDir;
namespace fs = std::filesystem;

// The error of loading `text` as a file, with the scratch path replaced by "x.toml".
std::string file_error(const std::string& text) {
  ScratchDir dir;
  const std::string path = dir.write("x.toml", text);
  std::string message = error_of([&] { load_config(path); });
  if (message.rfind(path, 0) == 0) message = "x.toml" + message.substr(path.size());
  return message;
}

std::string override_error(const std::string& override_text) {
  return error_of([&] { load_config("", {override_text}); });
}

TEST(ConfigErrors, UnknownKeySuggestsTheNearMiss) {
  EXPECT_EQ(file_error("[model]\nd_model = 64\nnorm_placment = \"post\"\n"),
            "x.toml:3: [model] unknown key 'norm_placment' (did you mean 'norm_placement'?)");
  EXPECT_EQ(file_error("[optim]\nwieght_decay = 0.1\n"),
            "x.toml:2: [optim] unknown key 'wieght_decay' (did you mean 'weight_decay'?)");
}

TEST(ConfigErrors, UnknownKeyWithoutNearMissOrInAnotherSection) {
  EXPECT_EQ(file_error("[model]\nflux_capacitor = 1\n"), "x.toml:2: [model] unknown key 'flux_capacitor'");
  EXPECT_EQ(file_error("\n[model]\nwarmup_steps = 10\n"),
            "x.toml:3: [model] unknown key 'warmup_steps' (it belongs in [schedule])");
}

TEST(ConfigErrors, UnknownSection) {
  EXPECT_EQ(file_error("[modle]\nd_model = 64\n"), "x.toml:1: unknown section [modle] (did you mean [model]?)");
  EXPECT_EQ(file_error("[train]\nsteps = 1\n[plots]\nx = 1\n"), "x.toml:3: unknown section [plots]");
  EXPECT_EQ(file_error("prest = \"gpt2\"\n").rfind("x.toml:1: unknown top-level key 'prest' (did you mean "
                                                   "'preset'?)", 0), 0u);
  EXPECT_EQ(file_error("model = 3\n"), "x.toml:1: 'model' must be a section [model], got integer 3");
}

TEST(ConfigErrors, WrongTypes) {
  EXPECT_EQ(file_error("[optim]\nlr = \"fast\"\n"),
            "x.toml:2: [optim] lr: expected a float, got string \"fast\"");
  EXPECT_EQ(file_error("[train]\nsteps = 1.5\n"), "x.toml:2: [train] steps: expected an integer, got float 1.5");
  EXPECT_EQ(file_error("[model]\nbias = 1\n"),
            "x.toml:2: [model] bias: expected a boolean (true/false), got integer 1");
  EXPECT_EQ(file_error("[model]\nnorm_type = 3\n"), "x.toml:2: [model] norm_type: expected a string, got integer 3");
  EXPECT_EQ(file_error("[train]\nseed = -1\n"),
            "x.toml:2: [train] seed: expected a non-negative integer, got integer -1");
  EXPECT_EQ(file_error("[model]\nd_model = [1, 2]\n"), "x.toml:2: [model] d_model: expected an integer, got an array");
}

TEST(ConfigErrors, OutOfRangeNumbers) {
  EXPECT_EQ(file_error("[optim]\nlr = 0\n"), "x.toml:2: [optim] lr must be > 0, got 0");
  EXPECT_EQ(file_error("[optim]\nlr = -1e-3\n"), "x.toml:2: [optim] lr must be > 0, got -0.001");
  EXPECT_EQ(file_error("[train]\nsteps = 0\n"), "x.toml:2: [train] steps must be >= 1, got 0");
  EXPECT_EQ(file_error("[model]\ndropout = 1.0\n"), "x.toml:2: [model] dropout must be in [0, 1), got 1");
  EXPECT_EQ(file_error("[model]\ndropout = -0.1\n"), "x.toml:2: [model] dropout must be in [0, 1), got -0.1");
  EXPECT_EQ(file_error("[data]\nval_fraction = 0\n"),
            "x.toml:2: [data] val_fraction must be in (0, 1), got 0");
  EXPECT_EQ(file_error("[model]\nnorm_eps = 0\n"), "x.toml:2: [model] norm_eps must be > 0, got 0");
  EXPECT_EQ(file_error("[log]\nevery = 0\n"), "x.toml:2: [log] every must be >= 1, got 0");
}

TEST(ConfigErrors, UnknownChoices) {
  EXPECT_EQ(file_error("[model]\nnorm_placement = \"psot\"\n"),
            "x.toml:2: [model] norm_placement must be one of post, pre, none, sandwich, deepnorm, admin, mix_ln, b2t; "
            "got 'psot' (did you mean 'post'?)");
  EXPECT_EQ(file_error("[model]\nnorm_type = \"rmsnrom\"\n"),
            fmt::format("x.toml:2: [model] norm_type must be one of {}; got 'rmsnrom' (did you mean 'rmsnorm'?)",
                        fmt::join(enum_names<NormType>(), ", ")));
  EXPECT_EQ(file_error("[model]\ndtype = \"float16\"\n"),
            "x.toml:2: [model] dtype must be one of float32, float64; got 'float16' (did you mean 'float32'?)");
  EXPECT_EQ(file_error("[model]\nffn_type = \"mlp\"\n"),
            "x.toml:2: [model] ffn_type must be one of relu, gelu, swiglu, geglu, moe; got 'mlp' (did you mean "
            "'moe'?)");
  EXPECT_EQ(file_error("[model]\ninit = \"kaiming\"\n"),
            "x.toml:2: [model] init must be one of xavier, gpt2, normal; got 'kaiming'");
  EXPECT_EQ(file_error("[optim]\nname = \"adamm\"\n"),
            "x.toml:2: [optim] name must be one of sgd, adam, adamw, radam; got 'adamm' (did you mean 'adam'?)");
  EXPECT_EQ(file_error("[schedule]\nkind = \"cosin\"\n"),
            "x.toml:2: [schedule] kind must be one of constant, inverse_sqrt, linear, cosine; got 'cosin' "
            "(did you mean 'cosine'?)");
  EXPECT_EQ(file_error("[data]\ntokenizer = \"bpe\"\n"),
            "x.toml:2: [data] tokenizer must be one of char, byte, sentencepiece; got 'bpe' (did you mean 'byte'?)");
  EXPECT_EQ(file_error("[train]\ndevice = \"tpu\"\n"), "x.toml:2: [train] device must be cpu, cuda or cuda:N; got 'tpu'");
  EXPECT_EQ(file_error("[train]\nname = \"a/b\"\n"),
            "x.toml:2: [train] name must be a plain directory name (not empty, no '/'), got 'a/b'");
  EXPECT_EQ(file_error("preset = \"gtp2\"\n"),
            "x.toml:1: preset must be one of gpt1, gpt2, llama, mistral, gemma, mixtral; got 'gtp2' (did you mean 'gpt2'?)");
}

TEST(ConfigErrors, ChecksAcrossKeysNameTheLastKeySet) {
  EXPECT_EQ(file_error("[model]\nd_model = 100\nn_heads = 3\n"),
            "x.toml:3: [model] d_model (100) must be divisible by n_heads (3) unless head_dim is set");
  EXPECT_EQ(file_error("[model]\nn_heads = 3\nd_model = 100\n"),
            "x.toml:3: [model] d_model (100) must be divisible by n_heads (3) unless head_dim is set");
  EXPECT_EQ(file_error("[train]\ncontext = 128\n"), "x.toml:2: [train] context (128) must be <= model.context_length (64)");
  EXPECT_EQ(file_error("[model]\ncontext_length = 32\n[train]\nname = \"a\"\n"),
            "x.toml:2: [train] context (64) must be <= model.context_length (32)");
  EXPECT_EQ(file_error("[schedule]\nkind = \"inverse_sqrt\"\n"),
            "x.toml:2: [schedule] kind 'inverse_sqrt' needs warmup_steps >= 1, got 0");
  EXPECT_EQ(file_error("[model]\nnorm_type = \"groupnorm\"\nnorm_groups = 3\n"),
            "x.toml:3: [model] d_model (128) must be divisible by norm_groups (3) for groupnorm");  EXPECT_EQ(file_error("[model]\nn_heads = 3\nhead_dim = 8\nn_kv_heads = 2\n"),
            "x.toml:4: [model] n_heads (3) must be a multiple of n_kv_heads (2)");
  EXPECT_EQ(file_error("[model]\npadding_idx = 300\n"), "x.toml:2: [model] padding_idx (300) must be < vocab_size (256)");
}

TEST(ConfigErrors, MoeExpertCounts) {
  EXPECT_EQ(file_error("[model]\nffn_type = \"moe\"\nn_experts = 4\nexperts_top_k = 5\n"),
            "x.toml:4: [model] experts_top_k (5) must be <= n_experts (4) for ffn_type 'moe'");
  EXPECT_EQ(file_error("[model]\nexperts_top_k = 3\nn_experts = 2\nffn_type = \"moe\"\n"),
            "x.toml:4: [model] experts_top_k (3) must be <= n_experts (2) for ffn_type 'moe'");
  EXPECT_EQ(file_error("[model]\nn_experts = 0\n"), "x.toml:2: [model] n_experts must be >= 1, got 0");
  EXPECT_EQ(file_error("[model]\nexperts_top_k = 0\n"), "x.toml:2: [model] experts_top_k must be >= 1, got 0");
  EXPECT_EQ(file_error("[model]\nrouter_aux_loss_coef = -0.01\n"),
            "x.toml:2: [model] router_aux_loss_coef must be >= 0, got -0.01");
  // A dense FFN ignores the expert keys.
  EXPECT_NO_THROW(load_config("", {"model.experts_top_k=9"}));
}

TEST(ConfigErrors, ZLossCoefMustBeFiniteAndNonNegative) {
  EXPECT_EQ(file_error("[model]\nz_loss_coef = -0.01\n"), "x.toml:2: [model] z_loss_coef must be >= 0, got -0.01");
  // inf and nan stop at the reader, as for every float key.
  EXPECT_EQ(file_error("[model]\nd_model = 64\nz_loss_coef = inf\n"),
            "x.toml:3: [model] z_loss_coef: expected a finite float, got float inf");
  EXPECT_EQ(override_error("model.z_loss_coef=nan"),
            "override 'model.z_loss_coef=nan': [model] z_loss_coef: expected a finite float, got float nan");
}

TEST(ConfigErrors, TomlSyntaxErrorGivesLineAndColumn) {
  const std::string message = file_error("[model]\nd_model = 64\nn_heads = = 4\n");
  EXPECT_EQ(message.rfind("x.toml:3:", 0), 0u) << message;
  EXPECT_NE(message.find("TOML syntax error"), std::string::npos) << message;
}

TEST(ConfigErrors, MissingFile) {
  const std::string message = error_of([] { load_config("/nonexistent/dir/run.toml"); });
  EXPECT_EQ(message, "/nonexistent/dir/run.toml: cannot open config file");
}

TEST(ConfigErrors, OverridesNameTheOverride) {
  EXPECT_EQ(override_error("optim.lr=abc"), "override 'optim.lr=abc': [optim] lr: expected a float, got string \"abc\"");
  EXPECT_EQ(override_error("optim.lr=-1"), "override 'optim.lr=-1': [optim] lr must be > 0, got -1");
  EXPECT_EQ(override_error("model.norm_placment=post"),
            "override 'model.norm_placment=post': [model] unknown key 'norm_placment' (did you mean "
            "'norm_placement'?)");
  EXPECT_EQ(override_error("modle.d_model=4"),
            "override 'modle.d_model=4': unknown section [modle] (did you mean [model]?)");
  EXPECT_EQ(override_error("lr"), "override 'lr': expected section.key=value");
  EXPECT_EQ(override_error("lr=1"), "override 'lr=1': expected section.key=value");
  EXPECT_EQ(override_error("model.n_heads=3"), "override 'model.n_heads=3': [model] d_model (128) must be divisible by n_heads (3) unless head_dim is set");
  EXPECT_EQ(override_error("preset=nope"), "override 'preset=nope': preset must be one of gpt1, gpt2, llama, mistral, gemma, mixtral; got 'nope'");
}

TEST(ConfigErrors, OverrideOfACrossCheckedKeyIsBlamedOverTheFile) {
  ScratchDir dir;
  const std::string path = dir.write("x.toml", "[model]\nd_model = 96\nn_heads = 4\n");
  EXPECT_EQ(error_of([&] { load_config(path, {"model.n_heads=5"}); }),
            "override 'model.n_heads=5': [model] d_model (96) must be divisible by n_heads (5) unless head_dim is set");
}

// The "section.key" of every key whose written value is a number (config_to_toml of the defaults).
std::vector<std::string> numeric_keys() {
  std::vector<std::string> keys;
  const std::string text = config_to_toml(RunConfig{});
  for (const std::string& key : config_key_names()) {
    const std::string name = key.substr(key.find('.') + 1);
    const size_t at = text.find("\n" + name + " = ");
    const char first = text[at + name.size() + 4];
    if (at != std::string::npos && (std::isdigit(static_cast<unsigned char>(first)) || first == '-')) keys.push_back(key);
  }
  return keys;
}

TEST(ConfigErrors, NoNumericKeyTakesInfinityOrNan) {
  const std::vector<std::string> keys = numeric_keys();
  EXPECT_GE(keys.size(), 30u);  // every integer and float key of the table
  for (const std::string& key : keys) {
    for (const char* value : {"inf", "-inf", "nan", "+inf"}) {
      const std::string override_text = key + "=" + value;
      const std::string message = error_of([&] { load_config("", {override_text}); });
      EXPECT_EQ(message.rfind("override '" + override_text + "': [" + key.substr(0, key.find('.')) + "] " +
                              key.substr(key.find('.') + 1), 0), 0u) << message;
    }
  }
  EXPECT_EQ(file_error("[optim]\nlr = inf\n"), "x.toml:2: [optim] lr: expected a finite float, got float inf");
  EXPECT_EQ(file_error("[optim]\neps = inf\n"), "x.toml:2: [optim] eps: expected a finite float, got float inf");
  EXPECT_EQ(file_error("[train]\ndivergence_loss = nan\n"),
            "x.toml:2: [train] divergence_loss: expected a finite float, got float nan");
}

TEST(ConfigErrors, IntegersAreWholeAndInRange) {
  EXPECT_EQ(file_error("[train]\nsteps = 1e30\n"), "x.toml:2: [train] steps must be an integer <= 9007199254740992, got float 1e+30");
  EXPECT_EQ(file_error("[train]\nsteps = 9007199254740993\n"),
            "x.toml:2: [train] steps must be <= 9007199254740992, got 9007199254740993");
  EXPECT_EQ(file_error("[log]\nevery = 4611686018427387904\n"),
            "x.toml:2: [log] every must be <= 9007199254740992, got 4611686018427387904");
  EXPECT_EQ(file_error("[model]\nd_model = 1e300\n"),
            "x.toml:2: [model] d_model must be an integer <= 9223372036854775807, got float 1e+300");
  EXPECT_EQ(file_error("[train]\nsteps = -1e3\n"), "x.toml:2: [train] steps must be an integer >= 1, got float -1000");
  EXPECT_EQ(file_error("[data]\ncopy_vocab = 4294967296\n"),
            "x.toml:2: [data] copy_vocab must be <= 2147483647, got 4294967296");
  EXPECT_EQ(file_error("[train]\ndevice = \"cuda:1x\"\n"), "x.toml:2: [train] device must be cpu, cuda or cuda:N; got 'cuda:1x'");
  // A whole number written as a float is that integer.
  EXPECT_EQ(load_config("", {"train.steps=1e3"}).train.steps, 1000);
  EXPECT_EQ(load_config("", {"train.steps=9007199254740992"}).train.steps, int64_t{1} << 53);
}

TEST(ConfigErrors, ConfigPathMustBeARegularFile) {
  ScratchDir dir;
  fs::create_directories(dir.path() / "conf");
  EXPECT_EQ(error_of([&] { load_config(dir.file("conf")); }), dir.file("conf") + ": is a directory, not a config file");
  ASSERT_EQ(::mkfifo(dir.file("pipe").c_str(), 0644), 0);
  EXPECT_EQ(error_of([&] { load_config(dir.file("pipe")); }),
            dir.file("pipe") + ": not a regular file (a config must be a TOML file)");
  // Through the binary: an error, and no run directory made with the defaults.
  const auto r = test::run_command("cd " + dir.path().string() + " && " + test::kNormlab + " train conf --quiet");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("conf: is a directory"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.path() / "runs"));
}

}  // namespace
}  // namespace normlab
