#include "nn/block.h"

#include <cmath>
#include <functional>

#include "autograd/ops.h"
#include "nn/init.h"
#include "nn/layers.h"

namespace normlab {

// ---- Block: shared registration and the sub-layers' dropout sites ----
// Sites: 0 is the embedding; layer l's attention is 1 + 2l, its FFN 2 + 2l.

std::shared_ptr<Norm> Block::add_norm(const std::string& name) {
  return register_module(name, std::make_shared<Norm>(config_, config_.d_model));
}

void Block::add_sublayers() {
  attn_ = register_module("attn", std::make_shared<CausalSelfAttention>(config_));
  ffn_ = register_module("ffn", make_feed_forward(config_));
}

Var Block::attention(const Var& h, uint64_t dropout_seed) {
  const ScopeGuard in_scope(attn_->scope());
  return attn_->forward(h, dropout_site_seed(dropout_seed, 1 + 2 * static_cast<uint64_t>(layer_)));
}

Var Block::feed_forward(const Var& h, uint64_t dropout_seed) {
  const ScopeGuard in_scope(ffn_->scope());
  return ffn_->forward(h, dropout_site_seed(dropout_seed, 2 + 2 * static_cast<uint64_t>(layer_)));
}

// ---- post ----
PostNormBlock::PostNormBlock(const ModelConfig& config, int64_t layer) : Block(config, layer) {
  norm1_ = add_norm("norm1");
  norm2_ = add_norm("norm2");
  add_sublayers();
}

Var PostNormBlock::forward(const Var& x, uint64_t seed) {
  const Var h = norm1_->forward(residual_add(x, attention(x, seed)));
  return norm2_->forward(residual_add(h, feed_forward(h, seed)));
}

// ---- pre ----
PreNormBlock::PreNormBlock(const ModelConfig& config, int64_t layer) : Block(config, layer) {
  norm1_ = add_norm("norm1");
  norm2_ = add_norm("norm2");
  add_sublayers();
}

Var PreNormBlock::forward(const Var& x, uint64_t seed) {
  const Var h = residual_add(x, attention(norm1_->forward(x), seed));
  return residual_add(h, feed_forward(norm2_->forward(h), seed));
}

// ---- none ----
NoNormBlock::NoNormBlock(const ModelConfig& config, int64_t layer) : Block(config, layer) {
  add_sublayers();
}

Var NoNormBlock::forward(const Var& x, uint64_t seed) {
  const Var h = residual_add(x, attention(x, seed));
  return residual_add(h, feed_forward(h, seed));
}

// ---- sandwich ----
SandwichBlock::SandwichBlock(const ModelConfig& config, int64_t layer) : Block(config, layer) {
  norm1_ = add_norm("norm1");
  post_norm1_ = add_norm("post_norm1");
  norm2_ = add_norm("norm2");
  post_norm2_ = add_norm("post_norm2");
  add_sublayers();
}

Var SandwichBlock::forward(const Var& x, uint64_t seed) {
  const Var h = residual_add(x, post_norm1_->forward(attention(norm1_->forward(x), seed)));
  return residual_add(h, post_norm2_->forward(feed_forward(norm2_->forward(h), seed)));
}

// ---- deepnorm, admin ----
ScaledShortcutBlock::ScaledShortcutBlock(const ModelConfig& config, int64_t layer)
    : Block(config, layer),
      alpha_(config.norm_placement == NormPlacement::Admin ? admin_omega(config.n_layers)
                                                           : deepnorm_alpha(config.n_layers)) {
  norm1_ = add_norm("norm1");
  norm2_ = add_norm("norm2");
  add_sublayers();
}

Var ScaledShortcutBlock::forward(const Var& x, uint64_t seed) {
  const Var h = norm1_->forward(residual_add(scale(x, alpha_), attention(x, seed)));
  return norm2_->forward(residual_add(scale(h, alpha_), feed_forward(h, seed)));
}

// ---- the table ----
namespace {
struct Placement {
  NormPlacement placement;
  bool final_norm;
  std::function<std::shared_ptr<Block>(const ModelConfig&, int64_t)> make;
};

template <typename B>
std::shared_ptr<Block> construct(const ModelConfig& config, int64_t layer) {
  return std::make_shared<B>(config, layer);
}

const std::vector<Placement>& placements() {
  static const std::vector<Placement> table = {
      {NormPlacement::Post, false, construct<PostNormBlock>},
      {NormPlacement::Pre, true, construct<PreNormBlock>},
      {NormPlacement::None, false, construct<NoNormBlock>},
      {NormPlacement::Sandwich, true, construct<SandwichBlock>},
      {NormPlacement::DeepNorm, false, construct<ScaledShortcutBlock>},
      {NormPlacement::Admin, false, construct<ScaledShortcutBlock>},
  };
  return table;
}

const Placement& find_placement(NormPlacement placement) {
  for (const Placement& p : placements())
    if (p.placement == placement) return p;
  fail("model", "invalid norm placement {}", static_cast<int>(placement));
}
}  // namespace

bool placement_has_final_norm(NormPlacement placement) {
  return find_placement(placement).final_norm;
}

std::shared_ptr<Block> make_block(const ModelConfig& config, int64_t layer) {
  return find_placement(config.norm_placement).make(config, layer);
}

}  // namespace normlab
