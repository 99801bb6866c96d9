// Transformer blocks, one class per normalization placement (formulas in nn/transformer.h).
// Every block has children "attn" (CausalSelfAttention) and "ffn" (FeedForward, or MoeFeedForward
// for ffn_type "moe") and its own norms:
//   post, pre, deepnorm, admin:  "norm1" (around attention), "norm2" (around the FFN)
//   sandwich:             "norm1", "norm2" on the sub-layer inputs, "post_norm1", "post_norm2" on
//                         their outputs
//   none:                 no norms
// Adding a placement = one small subclass of Block + one line in the table in block.cpp.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nn/attention.h"
#include "nn/ffn.h"
#include "nn/model_config.h"
#include "nn/module.h"
#include "nn/norms.h"

namespace normlab {

class Block : public Module {
 public:
  Block(const ModelConfig& config, int64_t layer) : config_(config), layer_(layer) {}
  // x (B,T,C) -> (B,T,C). dropout_seed: the model's seed for this forward (sites derived here).
  virtual Var forward(const Var& x, uint64_t dropout_seed) = 0;
  // The "ffn" child: a FeedForward or, for ffn_type "moe", a MoeFeedForward (nn/moe.h).
  const std::shared_ptr<FeedForwardLayer>& ffn() const { return ffn_; }

 protected:
  // Registration helpers for subclasses' constructors (register in data-flow order).
  std::shared_ptr<Norm> add_norm(const std::string& name);
  void add_sublayers();  // "attn" then "ffn"
  // The sub-layers with their per-layer dropout sites.
  Var attention(const Var& h, uint64_t dropout_seed);
  Var feed_forward(const Var& h, uint64_t dropout_seed);

  ModelConfig config_;
  int64_t layer_;

 private:
  std::shared_ptr<CausalSelfAttention> attn_;
  std::shared_ptr<FeedForwardLayer> ffn_;
};

// x = Norm(x + Attn(x));  x = Norm(x + FFN(x))     (Vaswani 2017, GPT-1, Xiong's Post-LN)
class PostNormBlock : public Block {
 public:
  PostNormBlock(const ModelConfig& config, int64_t layer);
  Var forward(const Var& x, uint64_t dropout_seed) override;

 private:
  std::shared_ptr<Norm> norm1_, norm2_;
};

// x = x + Attn(Norm(x));  x = x + FFN(Norm(x))     (GPT-2, LLaMA; final norm after the stack)
class PreNormBlock : public Block {
 public:
  PreNormBlock(const ModelConfig& config, int64_t layer);
  Var forward(const Var& x, uint64_t dropout_seed) override;

 private:
  std::shared_ptr<Norm> norm1_, norm2_;
};

// x = x + Attn(x);  x = x + FFN(x)
class NoNormBlock : public Block {
 public:
  NoNormBlock(const ModelConfig& config, int64_t layer);
  Var forward(const Var& x, uint64_t dropout_seed) override;
};

// x = x + Norm(Attn(Norm(x)));  x = x + Norm(FFN(Norm(x)))     (Sandwich-LN / Peri-LN)
class SandwichBlock : public Block {
 public:
  SandwichBlock(const ModelConfig& config, int64_t layer);
  Var forward(const Var& x, uint64_t dropout_seed) override;

 private:
  std::shared_ptr<Norm> norm1_, post_norm1_, norm2_, post_norm2_;
};

// x = Norm(alpha x + Attn(x));  x = Norm(alpha x + FFN(x)): Post-LN with a rescaled shortcut.
//   deepnorm: alpha = (2L)^(1/4) (DeepNet 2022; its beta init scaling is in nn/init.cpp)
//   admin:    alpha = omega = sqrt((2L + 1) / ln(2L + 1) - 1) (Liu et al. 2020, admin-torch's
//             default; a constant, the weights initialised as Post-LN's)
class ScaledShortcutBlock : public Block {
 public:
  ScaledShortcutBlock(const ModelConfig& config, int64_t layer);
  Var forward(const Var& x, uint64_t dropout_seed) override;
  double alpha() const { return alpha_; }

 private:
  double alpha_;
  std::shared_ptr<Norm> norm1_, norm2_;
};

// Whether the model applies "final_norm" after the last block (pre, sandwich).
bool placement_has_final_norm(NormPlacement placement);
std::shared_ptr<Block> make_block(const ModelConfig& config, int64_t layer);

}  // namespace normlab
