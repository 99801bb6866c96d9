// The norm table (nn/norm_kinds.h): a row for every norm type; each fused op equals its composed
// forward, forward and backward, in float64; the module, the initialisation and the config follow
// the table; a norm with only a composed forward (dyt) builds, trains and learns.
#include <gtest/gtest.h>

#include "autograd/ops.h"
#include "autograd/tape.h"
#include "core/ops.h"
#include "core/random.h"
#include "nn/model_cases.h"
#include "nn/norms.h"
#include "nn/transformer.h"

namespace normlab {
namespace {

// Row i is NormType i, found by its name, with a forward and a formula; built-in rows first.
TEST(NormKinds, EveryRowIsFoundByItsTypeAndName) {
  const std::vector<const NormKind*> kinds = norm_kinds();
  ASSERT_GT(kinds.size(), static_cast<size_t>(NormType::None));
  for (size_t i = 0; i < kinds.size(); ++i) {
    SCOPED_TRACE(kinds[i]->name);
    EXPECT_EQ(static_cast<size_t>(kinds[i]->type), i);
    EXPECT_EQ(&norm_kind(kinds[i]->type), kinds[i]);
    EXPECT_EQ(enum_value<NormType>(kinds[i]->name, "test"), kinds[i]->type);
    EXPECT_EQ(fmt::format("{}", kinds[i]->type), kinds[i]->name);
    EXPECT_NE(kinds[i]->composed, nullptr);
    EXPECT_FALSE(kinds[i]->formula.empty());
  }
  EXPECT_EQ(kinds[static_cast<size_t>(NormType::None)]->name, "none");
}

// Parameters moved off their initial values, so that no term of either side hides behind a 1 or a 0.
void perturb_parameters(Norm& norm, uint64_t seed) {
  NoGradGuard no_grad;
  Generator gen(seed);
  for (auto& [name, p] : norm.named_parameters())
    p.value().copy_(ops::add(p.value(), Tensor::randn(p.shape(), gen, 0.0, 0.3, DType::F64)));
}

struct Pass {
  std::vector<double> y, dx;
  std::vector<std::vector<double>> dparams;
};

Pass run(Norm& norm, const Tensor& x0, const Tensor& weights, bool composed) {
  norm.zero_grad();
  Var x = parameter(x0.clone());
  const Var y = composed ? norm.forward_composed(x) : norm.forward(x);
  backward(sum_all(mul(y, constant(weights))));
  Pass p{y.value().to_vector(), x.grad().to_vector(), {}};
  for (const auto& [name, param] : norm.named_parameters()) p.dparams.push_back(param.grad().to_vector());
  return p;
}

void expect_near(const std::vector<double>& a, const std::vector<double>& b, double tol, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], tol) << what << " [" << i << "]";
}

// Each fused op against the composed forward of its row, in training and (batchnorm) eval mode.
TEST(NormKinds, FusedOpsEqualTheirComposedForwardAndBackward) {
  for (const NormKind* row : norm_kinds()) {
    const NormKind& kind = *row;
    if (kind.fused == nullptr) continue;
    for (const bool training : {true, false}) {
      SCOPED_TRACE(fmt::format("{} training {}", kind.type, training));
      ModelConfig c;
      c.norm_type = kind.type;
      c.norm_groups = 2;
      c.dtype = ParamDType::Float64;
      Norm norm(c, 6);
      perturb_parameters(norm, 3);
      norm.train(training);
      Generator gen(11);
      const Tensor x = Tensor::randn({2, 5, 6}, gen, 0.5, 2.0, DType::F64);
      const Tensor w = Tensor::randn({2, 5, 6}, gen, 0.0, 1.0, DType::F64);
      const Pass composed = run(norm, x, w, true);  // first: the fused batchnorm moves its buffers
      const Pass fused = run(norm, x, w, false);
      expect_near(fused.y, composed.y, 1e-12, "y");
      expect_near(fused.dx, composed.dx, 1e-10, "dx");
      for (size_t i = 0; i < fused.dparams.size(); ++i) expect_near(fused.dparams[i], composed.dparams[i], 1e-10, "dparam");
    }
  }
}

// The model's norms start at the table's values: dyt's alpha 0.5, weights 1, biases 0.
TEST(NormKinds, InitialisationFollowsTheTable) {
  ModelConfig c = tiny_model_config(NormPlacement::Pre);  // d_model 8, 2 layers
  c.norm_type = NormType::DynamicTanh;
  const TransformerLM model(c);
  int alphas = 0;
  for (const auto& [name, p] : model.named_parameters()) {
    if (name.find("norm") == std::string::npos) continue;
    const std::vector<double> v = p.value().to_vector();
    const double want = name.ends_with(".alpha") ? 0.5 : name.ends_with(".weight") ? 1.0 : 0.0;
    alphas += name.ends_with(".alpha");
    EXPECT_EQ(v.size(), name.ends_with(".alpha") ? 1u : 8u) << name;
    for (const double e : v) EXPECT_EQ(e, want) << name;
  }
  EXPECT_EQ(alphas, 2 * 2 + 1);  // two per block and the final norm
}

// Dyt with no fused op: a tiny pre-norm model's loss falls on a fixed batch under plain SGD.
TEST(NormKinds, AComposedOnlyNormTrains) {
  ModelConfig c = tiny_model_config(NormPlacement::Pre);  // vocabulary 11, context 5
  c.norm_type = NormType::DynamicTanh;
  TransformerLM model(c);
  Generator gen(5);
  std::vector<int32_t> ids(10), targets(10);
  for (size_t i = 0; i < ids.size(); ++i) {
    ids[i] = static_cast<int32_t>(gen.below(11));
    targets[i] = (ids[i] + 1) % 11;  // the next symbol: learnable from the input alone
  }
  const Tensor in = Tensor::from_ints(ids, {2, 5}), out = Tensor::from_ints(targets, {2, 5});
  double first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    model.zero_grad();
    const Var loss = model.loss(in, out);
    backward(loss);
    (step == 0 ? first : last) = loss.item();
    NoGradGuard no_grad;
    for (auto& [name, p] : model.named_parameters()) p.value().copy_(ops::sub(p.value(), ops::scale(p.grad(), 0.5)));
  }
  EXPECT_LT(last, 0.5 * first) << "first " << first << " last " << last;
}

}  // namespace
}  // namespace normlab
