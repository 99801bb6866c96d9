// Named architecture presets: each sets the fields that define the family's structure (the keys of
// preset_keys()) and keeps every other field (sizes, n_kv_heads, head_dim, dropout, seed, dtype)
// from `base`. A key the config file or the command line sets explicitly wins over the preset
// (config/config.cpp prints one line for each such key). What each preset does and does not
// reproduce: docs/presets.md.
//   gpt1:    post, layernorm eps 1e-5, gelu (tanh), bias, tied head, learned positions, normal(0.02)
//   gpt2:    pre,  layernorm eps 1e-5, gelu (tanh), bias, tied head, learned positions, gpt2 init
//   llama:   pre,  rmsnorm eps 1e-6, swiglu, no bias, untied head, rope theta 10000, normal(0.02)
//   mistral: llama with rmsnorm eps 1e-5 and a sliding window of 4096
//   gemma:   pre,  rmsnorm_unit_offset (1 + w) eps 1e-6, geglu (tanh gelu), no bias, tied head,
//            rope theta 10000, token embeddings times sqrt(d_model), normal(0.02)
//   mixtral: pre,  rmsnorm eps 1e-5, moe (SwiGLU experts), no bias, untied head, rope theta 1e6, no
//            window, normal(0.02); n_experts and experts_top_k are sizes kept from `base` (their
//            defaults, 8 and 2, are Mixtral 8x7B's)
#pragma once
#include <string>
#include <vector>

#include "nn/model_config.h"

namespace normlab {

// Throws "[model] unknown preset 'x'; valid presets: gpt1, gpt2, llama, mistral, gemma,
// mixtral".
ModelConfig apply_preset(const std::string& name, ModelConfig base);
std::vector<std::string> preset_names();
// The [model] keys every preset sets (norm_placement, norm_type, ...).
const std::vector<std::string>& preset_keys();

}  // namespace normlab
