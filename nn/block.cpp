#include "nn/block.h"

#include "autograd/ops.h"
#include "nn/layers.h"

namespace normlab {

// Dropout sites: 0 is the embedding; layer l's attention is 1 + 2l, its FFN 2 + 2l.
Block::Block(const ModelConfig& config, int64_t layer) : PlacedLayer(config, layer, single_stack(config)) {
  add_sublayer_norms(2);
  attn_ = register_module("attn", std::make_shared<CausalSelfAttention>(config));
  ffn_ = register_module("ffn", make_feed_forward(config));
  declare_roles({{attn_.get(), ParamGroup::Attention}, {ffn_.get(), ParamGroup::Ffn}});
}

Var Block::forward(const Var& x, uint64_t seed) {
  const uint64_t site = 1 + 2 * static_cast<uint64_t>(layer_);
  const Var h = sublayer(0, x, x, [&](const Var& in) {  // (B,T,C)
    const ScopeGuard in_scope(attn_->scope());
    return attn_->forward(in, dropout_site_seed(seed, site));
  });
  return sublayer(1, h, x, [&](const Var& in) {
    const ScopeGuard in_scope(ffn_->scope());
    return ffn_->forward(in, dropout_site_seed(seed, site + 1));
  });
}

bool placement_has_final_norm(NormPlacement placement) { return placement_kind(placement).final_norm; }

std::shared_ptr<Block> make_block(const ModelConfig& config, int64_t layer) {
  return std::make_shared<Block>(config, layer);
}

}  // namespace normlab
