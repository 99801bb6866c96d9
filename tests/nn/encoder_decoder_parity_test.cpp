// model.arch = "encoder_decoder" against an independent reference: PyTorch's
// nn.TransformerEncoderLayer / nn.TransformerDecoderLayer assembled into fairseq's Transformer
// (shared embeddings x sqrt(d), sinusoidal positions, tied head; final norms for pre only), float64,
// with a padded source, a causal decoder and one ignored target. tests/nn/data/torch_seq2seq.txt
// holds torch's weights (under normlab's names, q, k, v split out of in_proj_weight), logits, loss
// and every parameter's gradient; tests/nn/make_torch_seq2seq_fixture.py wrote it. The model is
// loaded with those weights and must reproduce the logits, the loss and every gradient.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "nn/model_cases.h"
#include "nn/transformer.h"

namespace normlab {
namespace {

using Fixture = std::map<std::string, std::vector<double>>;

// Lines "<key> <n> <n values>"; '#' starts a comment line.
Fixture read_fixture() {
  const std::string path = std::string(NORMLAB_SOURCE_DIR) + "/tests/nn/data/torch_seq2seq.txt";
  std::ifstream in(path);
  Fixture out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string key;
    size_t n = 0;
    fields >> key >> n;
    std::vector<double> values(n);
    for (double& v : values) fields >> v;
    EXPECT_TRUE(!fields.fail()) << path << ": bad record " << key;
    out[key] = values;
  }
  EXPECT_FALSE(out.empty()) << "cannot read " << path;
  return out;
}

Tensor ints(const std::vector<double>& values, const Shape& shape) {
  return Tensor::from_ints(std::vector<int32_t>(values.begin(), values.end()), shape);
}

ModelConfig fixture_config(NormPlacement placement) {
  ModelConfig c = tiny_model_config(placement);  // vocab 11, d 8, 2 heads, 2 + 2 layers, d_ff 16, float64
  c.arch = ModelArch::EncoderDecoder;
  c.norm_type = NormType::LayerNorm;
  c.norm_eps = 1e-5;
  c.ffn_type = FfnType::Relu;
  c.position_embedding = PositionEmbedding::Sinusoidal;
  c.embedding_scale = EmbeddingScale::SqrtD;
  c.tie_embeddings = true;
  return c;
}

// The largest relative error |a - b| / |b| over the entries with |b| >= 1e-8 (some gradients are
// 0 in exact arithmetic, e.g. the key biases', which shift every score of a row alike, and are
// rounding noise in both), and the largest absolute error over all entries.
// norm: max |a - b| / max |b| over the tensor (the scale-aware measure).
struct Errors {
  double rel = 0, abs = 0, norm = 0;
};
Errors errors(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  Errors e;
  double largest = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const double diff = std::abs(a[i] - b[i]);
    e.abs = std::max(e.abs, diff);
    if (std::abs(b[i]) >= 1e-8) e.rel = std::max(e.rel, diff / std::abs(b[i]));
    largest = std::max(largest, std::abs(b[i]));
  }
  e.norm = largest > 0 ? e.abs / largest : e.abs;
  return e;
}

void expect_matches_torch(NormPlacement placement) {
  const std::string p = enum_name(placement);
  SCOPED_TRACE(p);
  const Fixture f = read_fixture();
  const int64_t B = 2, S = 5, T = 4;
  TransformerLM model(fixture_config(placement));
  size_t loaded = 0;
  for (auto& [name, param] : model.named_parameters()) {
    const auto it = f.find(p + ".param." + name);
    ASSERT_NE(it, f.end()) << "no torch parameter for " << name;
    ASSERT_EQ(static_cast<int64_t>(it->second.size()), param.value().numel()) << name;
    param.value().copy_(Tensor::from_vector(it->second, param.value().shape(), DType::F64));
    ++loaded;
  }
  EXPECT_EQ(loaded, static_cast<size_t>(std::count_if(f.begin(), f.end(), [&](const auto& kv) {
              return kv.first.rfind(p + ".param.", 0) == 0;
            }))) << "torch has parameters the model lacks";
  const Tensor sources = ints(f.at("inputs.sources"), {B, S}), padding = ints(f.at("inputs.source_padding"), {B, S});
  const Tensor ids = ints(f.at("inputs.ids"), {B, T}), targets = ints(f.at("inputs.targets"), {B, T});
  const Var logits = model.forward(ids, sources, padding);
  const Errors logits_err = errors(logits.value().to_vector(), f.at(p + ".logits"));
  const Var loss = model.loss(ids, targets, sources, padding);
  EXPECT_NEAR(loss.value().item(), f.at(p + ".loss")[0], 1e-12 * std::abs(f.at(p + ".loss")[0]));
  backward(loss);
  Errors grads_err;
  std::string worst;
  for (const auto& [name, param] : model.named_parameters()) {
    const Errors e = errors(param.grad().to_vector(), f.at(p + ".grad." + name));
    if (e.rel > grads_err.rel) grads_err.rel = e.rel, worst = name;
    grads_err.abs = std::max(grads_err.abs, e.abs);
    if (name.find(".k.bias") == std::string::npos)
      grads_err.norm = std::max(grads_err.norm, e.norm);  // the key biases' gradients are 0 (noise)
  }
  std::printf("[ torch parity ] %s: logits max rel %.3g (max abs %.3g); gradients max rel %.3g (%s), max abs %.3g, "
              "max per-tensor |diff| / max|grad| %.3g\n",
              p.c_str(), logits_err.rel, logits_err.abs, grads_err.rel, worst.c_str(), grads_err.abs, grads_err.norm);
  EXPECT_LT(logits_err.rel, 1e-12);
  EXPECT_LT(grads_err.rel, 1e-10) << worst;
  EXPECT_LT(grads_err.abs, 1e-13);
  EXPECT_LT(grads_err.norm, 1e-12);
}

TEST(EncoderDecoderTorchParity, PostLN) { expect_matches_torch(NormPlacement::Post); }
TEST(EncoderDecoderTorchParity, PreLN) { expect_matches_torch(NormPlacement::Pre); }

}  // namespace
}  // namespace normlab
