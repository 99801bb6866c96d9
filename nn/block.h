// A transformer block of the decoder-only (and encoder-only) model: attention, then the FFN, each a
// sub-layer in the config's placement row (nn/placement.h, which has the formulas). Children:
// its norms ("norm1", ["post_norm1"], "norm2", ["post_norm2"], as the layer's wiring has them),
// then "attn" (CausalSelfAttention) and "ffn" (FeedForward, or MoeFeedForward for ffn_type "moe").
// A placement is a row of the table in nn/placement.cpp, not a block class.
#pragma once
#include <memory>

#include "nn/attention.h"
#include "nn/ffn.h"
#include "nn/model_config.h"
#include "nn/placement.h"

namespace normlab {

class Block : public PlacedLayer {
 public:
  Block(const ModelConfig& config, int64_t layer);
  // x (B,T,C) -> (B,T,C). dropout_seed: the model's seed for this forward (sites derived here).
  Var forward(const Var& x, uint64_t dropout_seed);
  // The "ffn" child: a FeedForward or, for ffn_type "moe", a MoeFeedForward (nn/moe.h).
  const std::shared_ptr<FeedForwardLayer>& ffn() const { return ffn_; }

 private:
  std::shared_ptr<CausalSelfAttention> attn_;
  std::shared_ptr<FeedForwardLayer> ffn_;
};

// Whether the model applies a final norm after its stack(s) (the row's final_norm).
bool placement_has_final_norm(NormPlacement placement);
std::shared_ptr<Block> make_block(const ModelConfig& config, int64_t layer);

}  // namespace normlab
