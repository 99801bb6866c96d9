// Shared helpers of the nn tests: tiny configs and fixed random batches.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/random.h"
#include "core/tensor.h"
#include "nn/block.h"
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
  c.norm_placement = enum_value<NormPlacement>(placement, "small_config");
  c.norm_type = enum_value<NormType>(norm, "small_config");
  c.ffn_type = enum_value<FfnType>(ffn, "small_config");
  c.tie_embeddings = tied;
  c.seed = 7;
  return c;
}

// small_config for every norm placement x each of `norms` x every FFN type, the head tied in
// every other one (alternating differently per norm, so that each FFN type meets both), biases
// off in every third, token embeddings scaled by sqrt(d_model) in every fifth: the sweep of the
// whole-model tests. Seeds differ per variant.
inline std::vector<ModelConfig> model_variants(const std::vector<std::string>& norms) {
  std::vector<ModelConfig> out;
  for (const std::string& placement : enum_names<NormPlacement>())
    for (const std::string& norm : norms)
      for (const char* ffn : {"relu", "gelu", "swiglu", "geglu"}) {
        const int variant = static_cast<int>(out.size());
        ModelConfig c = small_config(placement, norm, ffn, (variant + variant / 4) % 2 == 0);
        c.bias = variant % 3 != 0;
        if (variant % 5 == 0) c.embedding_scale = EmbeddingScale::SqrtD;
        c.seed = static_cast<uint64_t>(variant);
        out.push_back(c);
      }
  return out;
}

// "pre layernorm gelu tied bias", for SCOPED_TRACE.
inline std::string describe(const ModelConfig& c) {
  return fmt::format("{} {} {}{}{}{}", c.norm_placement, c.norm_type, c.ffn_type, c.tie_embeddings ? " tied" : " untied",
                     c.bias ? " bias" : " no bias", c.embedding_scale == EmbeddingScale::SqrtD ? " sqrt_d" : "");
}

// int32 (B, T) uniform in [0, vocab).
inline Tensor random_ids(int64_t B, int64_t T, int64_t vocab, uint64_t seed) {
  Generator gen(seed);
  std::vector<int32_t> v(static_cast<size_t>(B * T));
  for (auto& x : v) x = static_cast<int32_t>(gen.below(static_cast<uint64_t>(vocab)));
  return Tensor::from_ints(v, {B, T});
}

}  // namespace normlab::testing
