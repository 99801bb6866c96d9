// Scopes in a model: every op a TransformerLM records carries the dotted path of the module that
// recorded it, so anomaly mode (autograd/anomaly.h) can name the layer and parameter of an inf.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "autograd/anomaly.h"
#include "nn/transformer.h"
#include "nn_test_util.h"

namespace normlab {
namespace {

using testing::random_ids;
using testing::small_config;

Var parameter_named(const TransformerLM& model, const std::string& name) {
  for (const auto& [n, p] : model.named_parameters())
    if (n == name) return p;
  ADD_FAILURE() << "no parameter " << name;
  return Var();
}

TEST(AnomalyScopes, ForwardInfInOneLayerNamesThatLayersOpAndParameter) {
  TransformerLM model(small_config("pre", "layernorm", "gelu"));  // 2 layers, d_model 16
  // Block 1's norm1 output xhat + 1 sums to 16 over its features (xhat sums to 0), so with every
  // query weight 1e38, q = norm1(x) W^T + b is 1.6e39: float32 overflows there first.
  parameter_named(model, "blocks.1.norm1.bias").value().fill_(1.0);
  parameter_named(model, "blocks.1.attn.q.weight").value().fill_(1e38);
  const Tensor ids = random_ids(2, 5, 13, 1), targets = random_ids(2, 5, 13, 2);
  const AnomalyModeGuard anomaly;
  AnomalyRecord r;
  try {
    backward(model.loss(ids, targets));
    ADD_FAILURE() << "no AnomalyError";
  } catch (const AnomalyError& e) {
    r = e.record;
  }
  Tape::current().clear();
  EXPECT_EQ(r.phase, "forward");
  EXPECT_EQ(r.op, "linear");
  EXPECT_EQ(r.scope, "blocks.1.attn.q");
  EXPECT_EQ(r.parameters, (std::vector<std::string>{"blocks.1.attn.q.weight", "blocks.1.attn.q.bias"}));
  ASSERT_EQ(r.inputs.size(), 3u);
  EXPECT_EQ(r.inputs[0].shape, (Shape{2, 5, 16}));  // (B,T,C)
  EXPECT_TRUE(r.inputs[0].finite);
  EXPECT_EQ(r.inputs[1].shape, (Shape{16, 16}));
  EXPECT_EQ(r.output.shape, (Shape{2, 5, 16}));
  EXPECT_EQ(r.output.dtype, DType::F32);
  EXPECT_FALSE(r.output.finite);
  EXPECT_STREQ(current_scope(), "");  // every module's scope was left on the way out
}

// Each op's scope is the innermost module running when it was recorded, and leaving a module
// restores its parent's: the loss after the model's last layer is recorded outside every scope.
TEST(AnomalyScopes, EveryRecordedOpCarriesTheModuleThatRecordedIt) {
  TransformerLM model(small_config("pre", "layernorm", "gelu", /*tied=*/false));
  Tape::current().clear();
  const Var loss = model.loss(random_ids(2, 5, 13, 1), random_ids(2, 5, 13, 2));
  std::map<std::string, std::vector<std::string>> scopes_of;  // op -> scopes in tape order
  for (const Node& node : Tape::current().nodes()) scopes_of[node.op].push_back(node.scope);
  Tape::current().clear();
  EXPECT_EQ(scopes_of["cross_entropy"], std::vector<std::string>{""});
  EXPECT_EQ(scopes_of["embedding"], (std::vector<std::string>{"tok_emb", "pos_emb"}));
  EXPECT_EQ(scopes_of["layer_norm"],
            (std::vector<std::string>{"blocks.0", "blocks.0", "blocks.1", "blocks.1", "final_norm"}));
  EXPECT_EQ(scopes_of["residual_add"], (std::vector<std::string>{"blocks.0", "blocks.0", "blocks.1", "blocks.1"}));
  EXPECT_EQ(scopes_of["causal_softmax"], (std::vector<std::string>{"blocks.0.attn", "blocks.1.attn"}));
  EXPECT_EQ(scopes_of["gelu"], (std::vector<std::string>{"blocks.0.ffn", "blocks.1.ffn"}));
  EXPECT_EQ(scopes_of["linear"],
            (std::vector<std::string>{"blocks.0.attn.q", "blocks.0.attn.k", "blocks.0.attn.v", "blocks.0.attn.o",
                                      "blocks.0.ffn.w1", "blocks.0.ffn.w2", "blocks.1.attn.q", "blocks.1.attn.k",
                                      "blocks.1.attn.v", "blocks.1.attn.o", "blocks.1.ffn.w1", "blocks.1.ffn.w2",
                                      "lm_head"}));
  EXPECT_STREQ(current_scope(), "");
}

}  // namespace
}  // namespace normlab
