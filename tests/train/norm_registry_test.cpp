// Rows added to the norm table at run time (register_norm_kind, nn/norm_kinds.h; Python's
// normlab.register_norm): the config takes the name, the model builds the row's parameters in
// every placement and its gradient checks pass, the memory estimate reads its kept tensors, a
// name registered again means the new row, and bad rows are refused with a message.
#include <gtest/gtest.h>

#include "autograd/ops.h"
#include "config/config.h"
#include "nn/model_cases.h"
#include "nn/norm_kinds.h"
#include "nn/transformer.h"
#include "test_util.h"
#include "train/memory_estimate.h"

namespace normlab {
namespace {

using test::error_of;

// ScaleNorm (Nguyen and Salazar 2019): g x / sqrt(sum x^2 + eps), one learnable scalar g.
Var scale_norm(const Var& x, const NormCall& c) {
  const Var norm = sqrt(add_scalar(sum(square(x), -1, true), c.eps));
  return mul(div(x, norm), c.param("g"));
}

NormKind scale_norm_row(const std::string& name, double kept_tensors) {
  return {.name = name, .formula = "g x / ||x||", .params = {{.name = "g", .per_channel = false, .initial = 3.0}},
          .kept_tensors = kept_tensors, .composed = scale_norm};
}

TEST(NormRegistry, ARegisteredRowIsANormTypeOfTheConfig) {
  const NormType type = register_norm_kind(scale_norm_row("scalenorm_a", 5));
  EXPECT_GT(static_cast<int>(type), static_cast<int>(NormType::None));
  const RunConfig c = load_config("", {"model.norm_type=scalenorm_a"});
  EXPECT_EQ(c.model.norm_type, type);
  EXPECT_EQ(fmt::format("{}", c.model.norm_type), "scalenorm_a");
  const std::string unknown = error_of([] { load_config("", {"model.norm_type=scalenorm_b"}); });
  EXPECT_NE(unknown.find("scalenorm_a"), std::string::npos) << unknown;  // listed among the choices
}

TEST(NormRegistry, ItBuildsInEveryPlacementAndPassesTheModelGradcheck) {
  const NormType type = register_norm_kind(scale_norm_row("scalenorm_model", 5));
  for (const NormPlacement placement :
       {NormPlacement::Post, NormPlacement::Pre, NormPlacement::Sandwich, NormPlacement::DeepNorm}) {
    SCOPED_TRACE(fmt::format("{}", placement));
    ModelConfig c = tiny_model_config(placement);
    c.norm_type = type;
    const TransformerLM model(c);
    int scalars = 0;
    for (const auto& [name, p] : model.named_parameters())
      if (name.ends_with(".g")) {
        ++scalars;
        EXPECT_EQ(p.value().to_vector(), std::vector<double>{3.0}) << name;
      }
    EXPECT_GE(scalars, 2 * 2);
    const OpCase check = make_model_case("scalenorm", "", c);
    const auto inputs = check.make_inputs(1, {});
    for (const InputCheck& r : gradcheck(check.fn, inputs, check.input_names, check.differentiable, check.options))
      EXPECT_TRUE(r.passed) << r.input << " " << r.max_rel_error;
  }
}

TEST(NormRegistry, TheMemoryEstimateReadsTheRowAndANameRegisteredAgainMeansTheNewRow) {
  register_norm_kind(scale_norm_row("scalenorm_memory", 1));
  RunConfig c = load_config("", {"model.norm_type=scalenorm_memory", "model.norm_placement=pre"});
  const double light = estimate_training_memory(c).activations;
  register_norm_kind(scale_norm_row("scalenorm_memory", 6));
  c = load_config("", {"model.norm_type=scalenorm_memory", "model.norm_placement=pre"});
  const double heavy = estimate_training_memory(c).activations;
  // 5 more (rows, C) float tensors per norm: 2 per block and the final norm
  const double per_norm = 5.0 * c.train.batch_size * c.train.context * c.model.d_model * 4;
  EXPECT_DOUBLE_EQ(heavy - light, per_norm * (2 * c.model.n_layers + 1));
}

TEST(NormRegistry, BadRowsAreRefused) {
  EXPECT_EQ(error_of([] { register_norm_kind(scale_norm_row("layernorm", 1)); }),
            "[register_norm] 'layernorm' is a built-in norm; choose another name");
  EXPECT_EQ(error_of([] { register_norm_kind(scale_norm_row("two words", 1)); }),
            "[register_norm] a norm's name must be a non-empty word, got 'two words'");
  NormKind no_forward = scale_norm_row("no_forward", 1);
  no_forward.composed = nullptr;
  EXPECT_EQ(error_of([&] { register_norm_kind(no_forward); }), "[register_norm] norm 'no_forward' needs a forward");
  NormKind twice = scale_norm_row("twice", 1);
  twice.params.push_back(twice.params[0]);
  EXPECT_EQ(error_of([&] { register_norm_kind(twice); }), "[register_norm] norm 'twice' names parameter 'g' twice");
  EXPECT_FALSE(find_norm_kind("twice").has_value());
}

}  // namespace
}  // namespace normlab
