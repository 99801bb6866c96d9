// Position-wise feed-forward network (children "w1", "w2", and "w3" for gated types):
//   relu:   w2(relu(w1 x))            w1 (F, C), w2 (C, F)
//   gelu:   w2(gelu(w1 x))            (tanh approximation, GPT-2)
//   swiglu: w2(silu(w1 x) * w3 x)     w3 (F, C)   (LLaMA, Mistral)
//   geglu:  w2(gelu(w1 x) * w3 x)                 (Gemma)
// then dropout(config.dropout). F = config.d_ff.
// ffn_type "moe" (Mixtral's sparse mixture of SwiGLU experts) is MoeFeedForward, nn/moe.h.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nn/layers.h"
#include "nn/model_config.h"
#include "nn/module.h"

namespace normlab {

// What a block calls its "ffn": x (B,T,C) -> (B,T,C).
class FeedForwardLayer : public Module {
 public:
  virtual Var forward(const Var& x, uint64_t dropout_seed) = 0;
};

// A FeedForward, or a MoeFeedForward for ffn_type moe.
std::shared_ptr<FeedForwardLayer> make_feed_forward(const ModelConfig& config);

// The dense FFN of every type but moe (x may be any (..., C)).
class FeedForward : public FeedForwardLayer {
 public:
  explicit FeedForward(const ModelConfig& config);
  // x (B,T,C) -> (B,T,C)
  Var forward(const Var& x, uint64_t dropout_seed) override;

 private:
  FfnType type_;
  double dropout_;
  std::shared_ptr<Linear> w1_, w2_, w3_;
};

}  // namespace normlab
