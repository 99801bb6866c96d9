// Per-parameter learning-rate multipliers (optim/lr_multipliers.h) and their use by every
// optimizer: layer scales, warmup of chosen groups, and the errors of malformed texts.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "core/error.h"
#include "optim/lr_multipliers.h"
#include "optim/optimizer.h"

namespace normlab {
namespace {

using Vec = std::vector<double>;

// "1 0.5 0": the values as text. (Comparing with a braced vector literal inside EXPECT_EQ
// miscompiles with Debian 12's GCC 12 at -O3: the literal read back as an earlier one's values.)
std::string text_of(const Vec& v) {
  std::string out;
  for (const double x : v) {
    if (!out.empty()) out += ' ';
    out += fmt::format("{:g}", x);
  }
  return out;
}

// Parameters with the roles their modules would declare: `group` and the layer of a single stack
// (-1: outside the layers).
std::vector<Var> params_in(const std::vector<std::pair<ParamGroup, int>>& where) {
  std::vector<Var> out;
  for (const auto& [group, layer] : where) {
    Var p = parameter(Tensor::zeros({1}, DType::F64));
    p.set_role({.group = group, .layer = layer});
    out.push_back(p);
  }
  return out;
}

TEST(LayerLrScale, HalvesListsAndErrors) {
  EXPECT_EQ(text_of(parse_layer_lr_scale("", 4)), "1 1 1 1");
  EXPECT_EQ(text_of(parse_layer_lr_scale("top_half:0", 4)), "1 1 0 0");
  EXPECT_EQ(text_of(parse_layer_lr_scale("bottom_half:0.5", 4)), "0.5 0.5 1 1");
  EXPECT_EQ(text_of(parse_layer_lr_scale("top_half:0", 5)), "1 1 1 0 0");  // the middle block is in neither half
  EXPECT_EQ(text_of(parse_layer_lr_scale("1, 0.5,0.25", 3)), "1 0.5 0.25");
  EXPECT_THROW(parse_layer_lr_scale("1,2", 3), Error);
  EXPECT_THROW(parse_layer_lr_scale("top_half:-1", 4), Error);
  EXPECT_THROW(parse_layer_lr_scale("middle:1", 4), Error);
  try {
    parse_layer_lr_scale("1,x,1", 3);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'x' is not a factor"), std::string::npos) << e.what();
  }
}

TEST(WarmupGroups, ParametersAreGroupedByRole) {
  const std::vector<Var> p = params_in({{ParamGroup::Attention, 3}, {ParamGroup::CrossAttention, 0},
                                        {ParamGroup::Ffn, 0}, {ParamGroup::Norms, 0}, {ParamGroup::Embeddings, -1},
                                        {ParamGroup::Head, -1}, {ParamGroup::None, -1}});
  std::string groups;
  for (const Var& v : p) groups += parameter_group(v) + ";";
  EXPECT_EQ(groups, "attention;cross_attention;ffn;norms;embeddings;head;;");
  EXPECT_EQ(parse_warmup_groups("attention, norms"), (std::vector<std::string>{"attention", "norms"}));
  EXPECT_EQ(parse_warmup_groups("cross_attention"), (std::vector<std::string>{"cross_attention"}));
  EXPECT_THROW(parse_warmup_groups("attention,mlp"), Error);
  EXPECT_THROW(parse_warmup_groups("attention,"), Error);  // "" is no group
}

// Linear warmup over 10 steps to lr_max, then constant: at step 0 the warmed groups run at 1/10
// of lr_max, the others at lr_max, a multiplier of 10; after the warmup every multiplier is 1.
TEST(LrMultipliers, UnwarmedGroupsRunTheScheduleWithoutItsWarmup) {
  ScheduleConfig s;
  s.kind = ScheduleKind::Constant;
  s.warmup_steps = 10;
  const std::vector<Var> names = params_in({{ParamGroup::Attention, 0}, {ParamGroup::Ffn, 0}, {ParamGroup::Ffn, 1}});
  const LrMultiplierSpec spec{.layer_scale = "top_half:0.5", .warmup_groups = "attention", .n_layers = 2};
  const Vec at0 = lr_multipliers(names, spec, s, 1e-3, 0, 100);
  EXPECT_DOUBLE_EQ(at0[0], 1.0);
  EXPECT_NEAR(at0[1], 10.0, 1e-12);
  EXPECT_NEAR(at0[2], 0.5 * 10.0, 1e-12);  // the layer scale and the warmup multiply
  const Vec later = lr_multipliers(names, spec, s, 1e-3, 50, 100);
  EXPECT_EQ(text_of(later), "1 1 0.5");
}

// Warmup of one half of the blocks: at step 0 of a 10-step warmup, the blocks of that half run at
// 1/10 of lr_max (multiplier 1 on the warmed schedule), every other parameter (the other half, the
// middle block of an odd stack, the embeddings) at lr_max (multiplier 10).
TEST(LrMultipliers, HalfTheBlocksWarmUp) {
  ScheduleConfig s;
  s.kind = ScheduleKind::Constant;
  s.warmup_steps = 10;
  const std::vector<Var> names = params_in({{ParamGroup::Embeddings, -1}, {ParamGroup::Attention, 0},
                                            {ParamGroup::Ffn, 1}, {ParamGroup::Norms, 2}, {ParamGroup::Attention, 3},
                                            {ParamGroup::Ffn, 4}});
  const LrMultiplierSpec top{.warmup_groups = "top_half", .n_layers = 5};
  EXPECT_EQ(text_of(lr_multipliers(names, top, s, 1e-3, 0, 100)), "10 10 10 10 1 1");
  const LrMultiplierSpec bottom{.warmup_groups = "bottom_half", .n_layers = 5};
  EXPECT_EQ(text_of(lr_multipliers(names, bottom, s, 1e-3, 0, 100)), "10 1 1 10 10 10");
  const LrMultiplierSpec both{.warmup_groups = "bottom_half, embeddings", .n_layers = 5};
  EXPECT_EQ(text_of(lr_multipliers(names, both, s, 1e-3, 0, 100)), "1 1 1 10 10 10");
}

// Every optimizer applies the multiplier to its own rate: a parameter with multiplier 0 does not
// move, one with 1 moves as without multipliers.
TEST(LrMultipliers, EveryOptimizerScalesEachParametersStep) {
  for (const OptimizerKind kind : {OptimizerKind::Sgd, OptimizerKind::Adam, OptimizerKind::AdamW, OptimizerKind::RAdam}) {
    OptimConfig c;
    c.name = kind;
    c.weight_decay = 0.1;
    auto make = [](const std::string& name) {
      return parameter(Tensor::from_vector(Vec{1.0, -2.0}, {2}, DType::F64), name);
    };
    Var frozen = make("a"), moving = make("b"), reference = make("b");
    auto opt = make_optimizer(c, {{"a", frozen}, {"b", moving}});
    auto plain = make_optimizer(c, {{"b", reference}});
    opt->set_lr_multipliers({0.0, 1.0});
    for (int t = 0; t < 3; ++t) {
      for (Var* p : {&frozen, &moving, &reference}) p->grad() = Tensor::from_vector(Vec{0.3, -0.1}, {2}, DType::F64);
      opt->step(0.01);
      plain->step(0.01);
    }
    EXPECT_EQ(text_of(frozen.value().to_vector()), "1 -2") << static_cast<int>(kind);
    EXPECT_EQ(moving.value().to_vector(), reference.value().to_vector()) << static_cast<int>(kind);
    EXPECT_THROW(opt->set_lr_multipliers({1.0}), Error);
  }
}

}  // namespace
}  // namespace normlab
