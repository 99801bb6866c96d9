#include "nn/presets.h"

#include "core/error.h"

namespace normlab {

namespace {

// Every field of preset_keys(), in that order.
struct Family {
  NormPlacement placement;
  NormType norm;
  double eps;
  FfnType ffn;
  bool bias, tie;
  InitScheme init;
  EmbeddingScale embedding_scale;
  PositionEmbedding positions;
  double rope_theta;
  int64_t sliding_window;
};

ModelConfig apply(ModelConfig c, const Family& f) {
  c.norm_placement = f.placement;
  c.norm_type = f.norm;
  c.norm_eps = f.eps;
  c.ffn_type = f.ffn;
  c.bias = f.bias;
  c.tie_embeddings = f.tie;
  c.init = f.init;
  c.embedding_scale = f.embedding_scale;
  c.position_embedding = f.positions;
  c.rope_theta = f.rope_theta;
  c.sliding_window = f.sliding_window;
  return c;
}

}  // namespace

std::vector<std::string> preset_names() { return {"gpt1", "gpt2", "llama", "mistral", "gemma", "mixtral"}; }

const std::vector<std::string>& preset_keys() {
  static const std::vector<std::string> keys = {
      "norm_placement", "norm_type", "norm_eps", "ffn_type", "bias", "tie_embeddings",
      "init", "embedding_scale", "position_embedding", "rope_theta", "sliding_window"};
  return keys;
}

ModelConfig apply_preset(const std::string& name, ModelConfig base) {
  using P = NormPlacement;
  using N = NormType;
  using F = FfnType;
  using I = InitScheme;
  using S = EmbeddingScale;
  using Pos = PositionEmbedding;
  // placement norm eps ffn bias tie init embedding_scale positions rope_theta sliding_window
  if (name == "gpt1") return apply(base, {P::Post, N::LayerNorm, 1e-5, F::Gelu, true, true, I::Normal, S::None, Pos::Learned, 10000.0, 0});
  if (name == "gpt2") return apply(base, {P::Pre, N::LayerNorm, 1e-5, F::Gelu, true, true, I::Gpt2, S::None, Pos::Learned, 10000.0, 0});
  if (name == "llama") return apply(base, {P::Pre, N::RmsNorm, 1e-6, F::SwiGlu, false, false, I::Normal, S::None, Pos::Rope, 10000.0, 0});
  if (name == "mistral") return apply(base, {P::Pre, N::RmsNorm, 1e-5, F::SwiGlu, false, false, I::Normal, S::None, Pos::Rope, 10000.0, 4096});
  if (name == "mixtral") return apply(base, {P::Pre, N::RmsNorm, 1e-5, F::Moe, false, false, I::Normal, S::None, Pos::Rope, 1e6, 0});
  if (name == "gemma") return apply(base, {P::Pre, N::RmsNormUnitOffset, 1e-6, F::GeGlu, false, true, I::Normal, S::SqrtD, Pos::Rope, 10000.0, 0});
  fail("model", "unknown preset '{}'; valid presets: {}", name, fmt::join(preset_names(), ", "));
}

}  // namespace normlab
