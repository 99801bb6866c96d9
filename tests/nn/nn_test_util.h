// Shared helpers of the nn tests: tiny configs and fixed random batches.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/random.h"
#include "core/tensor.h"
#include "nn/model_config.h"

namespace normlab::testing {

inline ModelConfig small_config(const std::string& placement, const std::string& norm = "layernorm",
                                const std::string& ffn = "gelu", bool tied = true) {
  ModelConfig c;
  c.vocab_size = 13;
  c.d_model = 16;
  c.n_heads = 2;
  c.n_layers = 2;
  c.d_ff = 24;
  c.context_length = 6;
  c.norm_placement = placement;
  c.norm_type = norm;
  c.ffn_type = ffn;
  c.tie_embeddings = tied;
  c.seed = 7;
  return c;
}

// int32 (B, T) uniform in [0, vocab).
inline Tensor random_ids(int64_t B, int64_t T, int64_t vocab, uint64_t seed) {
  Generator gen(seed);
  std::vector<int32_t> v(static_cast<size_t>(B * T));
  for (auto& x : v) x = static_cast<int32_t>(gen.below(static_cast<uint64_t>(vocab)));
  return Tensor::from_ints(v, {B, T});
}

}  // namespace normlab::testing
