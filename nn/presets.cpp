#include "nn/presets.h"

#include "core/error.h"

namespace normlab {

namespace {

ModelConfig family(ModelConfig c, const char* placement, const char* norm, double eps, const char* ffn,
                   bool bias, bool tie) {
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
  if (name == "gpt1") return family(base, "post", "layernorm", 1e-5, "gelu", true, true);
  if (name == "gpt2") {
    ModelConfig c = family(base, "pre", "layernorm", 1e-5, "gelu", true, true);
    c.init = "gpt2";
    return c;
  }
  if (name == "llama") return family(base, "pre", "rmsnorm", 1e-6, "swiglu", false, false);
  if (name == "mistral") return family(base, "pre", "rmsnorm", 1e-5, "swiglu", false, false);
  if (name == "gemma") {
    ModelConfig c = family(base, "pre", "rmsnorm_unit_offset", 1e-6, "geglu", false, true);
    c.embedding_scale = "sqrt_d";  // Hugging Face's GemmaModel: embeddings times sqrt(hidden_size)
    return c;
  }
  fail("model", "unknown preset '{}'; valid presets: {}", name, fmt::join(preset_names(), ", "));
}

}  // namespace normlab
