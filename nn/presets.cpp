#include "nn/presets.h"

#include "core/error.h"

namespace normlab {

namespace {

// Every field of preset_keys(), in that order.
struct Family {
  const char* placement;
  const char* norm;
  double eps;
  const char* ffn;
  bool bias, tie;
  const char* init;
  const char* embedding_scale;
  const char* positions;
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

std::vector<std::string> preset_names() { return {"gpt1", "gpt2", "llama", "mistral", "gemma"}; }

const std::vector<std::string>& preset_keys() {
  static const std::vector<std::string> keys = {
      "norm_placement", "norm_type", "norm_eps", "ffn_type", "bias", "tie_embeddings",
      "init", "embedding_scale", "position_embedding", "rope_theta", "sliding_window"};
  return keys;
}

ModelConfig apply_preset(const std::string& name, ModelConfig base) {
  // placement norm eps ffn bias tie init embedding_scale positions rope_theta sliding_window
  if (name == "gpt1") return apply(base, {"post", "layernorm", 1e-5, "gelu", true, true, "normal", "none", "learned", 10000.0, 0});
  if (name == "gpt2") return apply(base, {"pre", "layernorm", 1e-5, "gelu", true, true, "gpt2", "none", "learned", 10000.0, 0});
  if (name == "llama") return apply(base, {"pre", "rmsnorm", 1e-6, "swiglu", false, false, "normal", "none", "rope", 10000.0, 0});
  if (name == "mistral") return apply(base, {"pre", "rmsnorm", 1e-5, "swiglu", false, false, "normal", "none", "rope", 10000.0, 4096});
  if (name == "gemma") return apply(base, {"pre", "rmsnorm_unit_offset", 1e-6, "geglu", false, true, "normal", "sqrt_d", "rope", 10000.0, 0});
  fail("model", "unknown preset '{}'; valid presets: {}", name, fmt::join(preset_names(), ", "));
}

}  // namespace normlab
