// Named architecture presets: each sets the fields that define the family and keeps every other
// field (sizes, dropout, seed, dtype) from `base`. A config file's [model] keys override a preset.
//   gpt1:    post,  layernorm eps 1e-5, gelu,   bias, tied head,   xavier init
//   gpt2:    pre,   layernorm eps 1e-5, gelu,   bias, tied head,   gpt2 init (0.02, outputs / sqrt(2L))
//   llama:   pre,   rmsnorm eps 1e-6,   swiglu, no bias, untied head
//   mistral: llama with rmsnorm eps 1e-5
//   gemma:   pre,   rmsnorm_unit_offset (1 + w) eps 1e-6, geglu (gelu-gated, as Gemma), no bias,
//            tied head, token embeddings times sqrt(d_model) (embedding_scale "sqrt_d")
#pragma once
#include <string>
#include <vector>

#include "nn/model_config.h"

namespace normlab {

// Throws "[model] unknown preset 'x'; valid presets: gpt1, gpt2, llama, mistral, gemma".
ModelConfig apply_preset(const std::string& name, ModelConfig base);
std::vector<std::string> preset_names();

}  // namespace normlab
