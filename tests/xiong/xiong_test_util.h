// The tiny model the Xiong tests probe: d 32, 2 heads, ReLU FFN 128, Xavier init.
#pragma once
#include <cstdint>
#include <string>

#include "nn/model_config.h"

namespace normlab::xiong {

inline ModelConfig tiny_model(const std::string& placement, int64_t layers, uint64_t seed, int64_t vocab = 32) {
  ModelConfig c;
  c.vocab_size = vocab;
  c.d_model = 32;
  c.n_heads = 2;
  c.d_ff = 128;
  c.context_length = 16;
  c.n_layers = layers;
  c.norm_placement = enum_value<NormPlacement>(placement, "tiny_model");
  c.ffn_type = FfnType::Relu;
  c.init = InitScheme::Xavier;
  c.seed = seed;
  return c;
}

}  // namespace normlab::xiong
