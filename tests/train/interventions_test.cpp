// The training interventions of issue 38, each through the trainer: a per-layer learning-rate
// scale freezes exactly the blocks it names, warmup of some parameter groups gives each group its
// own schedule, value clipping bounds every element's step, QK-norm makes attention blind to
// the scale of its query projection, and the z-loss adds to the training loss (not to the validation
// loss) and changes the step.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "config/config.h"
#include "nn/transformer.h"
#include "train/checkpoint.h"
#include "trainer_test_util.h"

namespace normlab {
namespace {

using test::TinyRun;
using test::quiet_options;
using test::Weights;
using test::weights_of;

// The run's config resolved as the trainer resolves it (the vocabulary from the data).
RunConfig resolved(const TinyRun& t, std::vector<std::string> overrides) {
  RunConfig c = t.config(overrides);
  c.model.vocab_size = make_dataset(c.data)->vocab_size();
  return c;
}

// Trains `name` with the overrides; its final weights and its initial ones.
std::pair<Weights, Weights> trained(const TinyRun& t, const std::string& name, std::vector<std::string> overrides) {
  overrides.push_back("train.name=" + name);
  const RunConfig c = resolved(t, overrides);
  train(c, quiet_options());
  TransformerLM model(c.model);
  const Weights initial = weights_of(model);
  load_model_weights(t.run(name).string(), model);
  return {weights_of(model), initial};
}

bool in_block(const std::string& name, int block) { return name.rfind("blocks." + std::to_string(block) + ".", 0) == 0; }

TEST(Interventions, TopHalfLayerScaleZeroFreezesExactlyTheTopBlocks) {
  TinyRun t;  // 2 layers: block 1 is the top half
  const auto [after, before] = trained(t, "frozen", {"optim.layer_lr_scale=top_half:0"});
  int frozen = 0, moved = 0;
  for (const auto& [name, w] : after) {
    if (in_block(name, 1)) {
      EXPECT_EQ(w, before.at(name)) << name << " moved with a scale of 0";
      ++frozen;
    } else {
      moved += w != before.at(name);
    }
  }
  EXPECT_GT(frozen, 0);
  EXPECT_GT(moved, 0);
  EXPECT_NE(after.at("tok_emb.weight"), before.at("tok_emb.weight"));
}

// One SGD step under a 10-step warmup: with warmup_groups = "attention" the attention weights
// take the warmed-up step (as a run where every group warms up) and everything else the full
// step (as a run without warmup).
TEST(Interventions, OnlyTheWarmupGroupsFollowTheWarmup) {
  TinyRun t;
  const std::vector<std::string> base = {"optim.name=sgd", "schedule.kind=constant", "train.steps=1"};
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.end(), base.begin(), base.end());
    return extra;
  };
  const Weights all = trained(t, "all", with({"schedule.warmup_steps=10"})).first;
  const Weights none = trained(t, "none", with({"schedule.warmup_steps=0"})).first;
  const Weights attn = trained(t, "attn", with({"schedule.warmup_steps=10", "schedule.warmup_groups=attention"})).first;
  int attention = 0;
  for (const auto& [name, w] : attn) {
    const bool is_attention = name.find(".attn.") != std::string::npos;
    attention += is_attention;
    EXPECT_EQ(w, (is_attention ? all : none).at(name)) << name;
  }
  EXPECT_GT(attention, 0);
  EXPECT_NE(all.at("blocks.0.ffn.w1.weight"), none.at("blocks.0.ffn.w1.weight"));  // the schedules differ
}

// Every element's gradient clamped to 1e-4: one SGD step moves no weight by more than lr * 1e-4.
TEST(Interventions, ValueClippingBoundsEveryElementsStep) {
  TinyRun t;
  const std::vector<std::string> base = {"optim.name=sgd", "optim.lr=0.1", "train.steps=1"};
  auto largest_step = [&](const std::string& name, std::vector<std::string> extra) {
    extra.insert(extra.end(), base.begin(), base.end());
    const auto [after, before] = trained(t, name, extra);
    double most = 0;
    for (const auto& [key, w] : after)
      for (size_t i = 0; i < w.size(); ++i) most = std::max(most, std::abs(w[i] - before.at(key)[i]));
    return most;
  };
  const double clipped = largest_step("clipped", {"optim.grad_clip_value=1e-4"});
  EXPECT_LE(clipped, 0.1 * 1e-4 * 1.01);  // float32 weights: w - 1e-5 rounds to ~1e-9
  EXPECT_GT(clipped, 0.1 * 1e-4 * 0.5);  // some gradient element reached the bound
  EXPECT_GT(largest_step("free", {}), 10 * clipped);
}

// LayerNorm and RMSNorm are scale invariant: with QK-norm, multiplying every query projection by
// 100 leaves the logits as they were (up to the norms' eps); without it the attention changes.
TEST(Interventions, QkNormMakesTheLogitsBlindToTheQueryScale) {
  for (const std::string norm : {"layernorm", "rmsnorm"}) {
    ModelConfig c;
    c.vocab_size = 11;
    c.d_model = 16;
    c.n_heads = 2;
    c.n_layers = 2;
    c.d_ff = 32;
    c.context_length = 8;
    c.norm_type = parse_enum<NormType>(norm).value();
    c.dtype = ParamDType::Float64;
    const Tensor ids = Tensor::from_vector({1, 4, 2, 9, 3, 7}, {1, 6}, DType::I32);
    for (const bool qk : {true, false}) {
      c.qk_norm = qk;
      TransformerLM model(c);
      const std::vector<double> before = model.forward(ids).value().to_vector();
      for (const auto& [name, p] : model.named_parameters()) {
        if (name.find("attn.q.") == std::string::npos) continue;
        std::vector<double> v = p.value().to_vector();
        for (double& x : v) x *= 100;
        Tensor storage = p.value();  // a handle on the parameter's own storage
        storage.copy_(Tensor::from_vector(v, p.shape(), p.dtype()));
      }
      const std::vector<double> after = model.forward(ids).value().to_vector();
      double gap = 0;
      for (size_t i = 0; i < after.size(); ++i) gap = std::max(gap, std::abs(after[i] - before[i]));
      if (qk) EXPECT_LT(gap, 1e-3) << norm;
      else EXPECT_GT(gap, 1e-2) << norm;
    }
  }
}

TEST(Interventions, QkNormAddsNormsPerHeadAndMalformedScalesNameTheirKey) {
  ModelConfig c;
  c.qk_norm = true;
  const TransformerLM model(c);
  std::map<std::string, Shape> shapes;
  for (const auto& [name, p] : model.named_parameters()) shapes[name] = p.shape();
  ASSERT_TRUE(shapes.count("blocks.0.attn.q_norm.weight"));
  EXPECT_EQ(shapes.at("blocks.0.attn.k_norm.weight"), (Shape{c.d_model / c.n_heads}));
  TinyRun t;
  for (const auto& [override_text, expected] :
       {std::pair{std::string("optim.layer_lr_scale=1,2,3"), std::string("3 factor(s) for 2 layers")},
        {std::string("schedule.warmup_groups=attention,mlp"), std::string("unknown group 'mlp'")}}) {
    try {
      t.config({override_text});
      ADD_FAILURE() << override_text << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(override_text.substr(0, override_text.find('='))), std::string::npos)
          << e.what();
    }
  }
}

// One SGD step of the tiny copy-task run (its prompt targets are ignored) with model.z_loss_coef
// = 0.5 and 1 against the same run without: step 1's train_loss (at initialization) grows by c
// times the mean lse^2 of the counted tokens, so the gap doubles with c; the updated weights differ;
// and the key changes the fingerprint only when set.
TEST(Interventions, ZLossAddsToTheTrainingLossAndChangesTheStep) {
  TinyRun t;
  const std::vector<std::string> base = {"optim.name=sgd", "optim.lr=0.1", "train.steps=1"};
  auto run = [&](const std::string& name, std::vector<std::string> extra) {
    extra.insert(extra.end(), base.begin(), base.end());
    const auto weights = trained(t, name, extra);
    const auto rows = read_metrics(t.run(name) / "metrics.jsonl");
    EXPECT_FALSE(rows.empty()) << name;
    return std::pair{weights, rows.empty() ? NAN : rows[0]["train_loss"].get<double>()};
  };
  const auto [plain, plain_loss] = run("plain", {});
  const auto [half, half_loss] = run("z_half", {"model.z_loss_coef=0.5"});
  const auto [one, one_loss] = run("z_one", {"model.z_loss_coef=1"});
  const double gap = half_loss - plain_loss;
  EXPECT_GT(gap, 0.5);  // 0.5 mean lse^2, lse ~ log(vocab) at initialization
  EXPECT_NEAR(one_loss - plain_loss, 2 * gap, 1e-4);  // float32 losses
  EXPECT_NE(half.first.at("tok_emb.weight"), plain.first.at("tok_emb.weight"));
  EXPECT_EQ(half.second.at("tok_emb.weight"), plain.second.at("tok_emb.weight"));  // the same initialization
  const std::string unset = config_fingerprint(t.config({}));
  EXPECT_EQ(config_fingerprint(t.config({"model.z_loss_coef=0"})), unset);
  EXPECT_NE(config_fingerprint(t.config({"model.z_loss_coef=1e-4"})), unset);
}

}  // namespace
}  // namespace normlab
