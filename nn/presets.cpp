#include "nn/presets.h"

#include "core/error.h"

namespace normlab {

namespace {

ModelConfig family(ModelConfig c, NormPlacement placement, NormType norm, double eps, FfnType ffn, bool bias,
                   bool tie) {
  c.norm_placement = placement;
  c.norm_type = norm;
  c.norm_eps = eps;
  c.ffn_type = ffn;
  c.bias = bias;
  c.tie_embeddings = tie;
  return c;
}

}  // namespace

std::vector<std::string> preset_names() { return {"gpt1", "gpt2", "llama", "mistral", "gemma"}; }

ModelConfig apply_preset(const std::string& name, ModelConfig base) {
  using P = NormPlacement;
  using N = NormType;
  using F = FfnType;
  if (name == "gpt1") return family(base, P::Post, N::LayerNorm, 1e-5, F::Gelu, true, true);
  if (name == "gpt2") {
    ModelConfig c = family(base, P::Pre, N::LayerNorm, 1e-5, F::Gelu, true, true);
    c.init = InitScheme::Gpt2;
    return c;
  }
  if (name == "llama") return family(base, P::Pre, N::RmsNorm, 1e-6, F::SwiGlu, false, false);
  if (name == "mistral") return family(base, P::Pre, N::RmsNorm, 1e-5, F::SwiGlu, false, false);
  if (name == "gemma") {
    ModelConfig c = family(base, P::Pre, N::RmsNormUnitOffset, 1e-6, F::GeGlu, false, true);
    c.embedding_scale = EmbeddingScale::SqrtD;  // Hugging Face's GemmaModel: embeddings times sqrt(hidden_size)
    return c;
  }
  fail("model", "unknown preset '{}'; valid presets: {}", name, fmt::join(preset_names(), ", "));
}

}  // namespace normlab
