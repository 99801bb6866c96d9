// Whole-model gradient checks: every parameter of a tiny float64 model against central finite
// differences (nn/model_cases.h), for the registered post/pre cases and a few more variants.
#include <gtest/gtest.h>

#include "autograd/gradcheck.h"
#include "nn/model_cases.h"
#include "nn/norm_kinds.h"

namespace normlab {
namespace {

void expect_case_passes(const OpCase& c) {
  const auto inputs = c.make_inputs(0, {});
  ASSERT_EQ(inputs.size(), c.input_names.size());
  const auto results = gradcheck(c.fn, inputs, c.input_names, c.differentiable, c.options);
  ASSERT_EQ(results.size(), c.input_names.size());
  for (const InputCheck& r : results)
    EXPECT_TRUE(r.passed) << c.name << " " << r.input << ": max rel " << r.max_rel_error << " max abs "
                          << r.max_abs_error;
}

TEST(ModelGradcheck, RegisteredCasesPass) {
  std::vector<OpCase> cases;
  register_model_cases(cases);
  size_t norms_with_parameters = 0;  // each has a composed case, named from its row
  for (const NormKind* kind : norm_kinds()) norms_with_parameters += !kind->params.empty();
  ASSERT_EQ(cases.size(), 13u + norms_with_parameters + 2u);  // then every norm's composed form and the dyt models
  EXPECT_EQ(cases[0].name, "model_post");
  EXPECT_EQ(cases[1].name, "model_pre");
  EXPECT_EQ(cases[2].name, "model_post_sinusoidal");
  EXPECT_EQ(cases[3].name, "model_llama");
  EXPECT_EQ(cases[4].name, "model_mistral");
  EXPECT_EQ(cases[5].name, "model_gemma");
  EXPECT_EQ(cases[6].name, "model_encoder_post");
  EXPECT_EQ(cases[7].name, "model_encoder_pre");
  EXPECT_EQ(cases[8].name, "model_encoder_decoder_post");
  EXPECT_EQ(cases[9].name, "model_encoder_decoder_pre");
  EXPECT_EQ(cases[10].name, "moe_ffn");
  EXPECT_EQ(cases[11].name, "moe_load_balancing_loss");
  EXPECT_EQ(cases[12].name, "model_moe");
  std::vector<std::string> names = {"model_pre_dyt", "model_post_dyt"};
  for (const NormKind* kind : norm_kinds())
    if (!kind->params.empty()) names.push_back("norm_" + kind->name + "_composed");
  for (const std::string& name : names)
    EXPECT_EQ(std::count_if(cases.begin(), cases.end(), [&](const OpCase& c) { return c.name == name; }), 1) << name;
  for (const OpCase& c : cases) expect_case_passes(c);
}

TEST(ModelGradcheck, OtherPlacementsNormsAndFfns) {
  ModelConfig sandwich = tiny_model_config(NormPlacement::Sandwich);
  sandwich.norm_type = NormType::RmsNorm;
  sandwich.ffn_type = FfnType::SwiGlu;
  sandwich.tie_embeddings = false;
  expect_case_passes(make_model_case("sandwich", "", sandwich));
  ModelConfig deep = tiny_model_config(NormPlacement::DeepNorm);
  deep.norm_type = NormType::RmsNormUnitOffset;
  deep.ffn_type = FfnType::GeGlu;
  expect_case_passes(make_model_case("deepnorm", "", deep));
  expect_case_passes(make_model_case("admin", "", tiny_model_config(NormPlacement::Admin)));
  ModelConfig qk = tiny_model_config(NormPlacement::Pre);  // QK-norm: a norm inside attention, per head
  qk.qk_norm = true;
  qk.norm_type = NormType::RmsNorm;
  expect_case_passes(make_model_case("qk_norm", "", qk));
  ModelConfig none = tiny_model_config(NormPlacement::None);
  none.ffn_type = FfnType::Relu;
  expect_case_passes(make_model_case("none", "", none));
}

TEST(ModelGradcheck, Float32ModelIsRejected) {
  ModelConfig c = tiny_model_config(NormPlacement::Pre);
  c.dtype = ParamDType::Float32;
  EXPECT_THROW(make_model_case("x", "", c), Error);
}

}  // namespace
}  // namespace normlab
