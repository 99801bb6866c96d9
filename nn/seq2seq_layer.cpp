#include "nn/seq2seq_layer.h"

#include <string>

#include "autograd/ops.h"
#include "core/ops.h"
#include "nn/layers.h"

namespace normlab {

void check_seq2seq_placement(NormPlacement placement) {
  NL_CHECK(placement == NormPlacement::Post || placement == NormPlacement::Pre || placement == NormPlacement::None ||
               placement == NormPlacement::Sandwich,
           "model",
           "arch 'encoder_decoder' does not support norm_placement '{}' (supported: post, pre, none, sandwich; "
           "deepnorm and admin need their encoder-decoder shortcut and init scales)",
           placement);
}

uint64_t seq2seq_cross_site(int64_t n_layers, int64_t l) { return static_cast<uint64_t>(2 * n_layers + 1 + l); }
uint64_t seq2seq_source_embedding_site(int64_t n_layers) { return static_cast<uint64_t>(3 * n_layers + 1); }

namespace {
// The self-attention and FFN sites of layer l: the decoder-only model's for the decoder, after the
// source embedding's for the encoder.
uint64_t self_attention_site(int64_t n_layers, int64_t l, bool decoder) {
  return (decoder ? 0 : seq2seq_source_embedding_site(n_layers)) + 1 + 2 * static_cast<uint64_t>(l);
}
}  // namespace

Seq2SeqLayer::Seq2SeqLayer(const ModelConfig& config, int64_t layer, bool decoder)
    : config_(config), layer_(layer), decoder_(decoder) {
  check_seq2seq_placement(config.norm_placement);
  const size_t n_sublayers = decoder ? 3 : 2;
  const bool has_norms = config.norm_placement != NormPlacement::None;
  for (size_t i = 0; has_norms && i < n_sublayers; ++i)
    norms_.push_back(register_module("norm" + std::to_string(i + 1), std::make_shared<Norm>(config, config.d_model)));
  for (size_t i = 0; config.norm_placement == NormPlacement::Sandwich && i < n_sublayers; ++i)
    post_norms_.push_back(
        register_module("post_norm" + std::to_string(i + 1), std::make_shared<Norm>(config, config.d_model)));
  attn_ = register_module("attn", std::make_shared<CausalSelfAttention>(config, decoder));
  if (decoder) cross_attn_ = register_module("cross_attn", std::make_shared<CausalSelfAttention>(config, false));
  ffn_ = register_module("ffn", make_feed_forward(config));
}

Var Seq2SeqLayer::sublayer(const Var& x, size_t i, const std::function<Var(const Var&)>& f) {
  switch (config_.norm_placement) {
    case NormPlacement::Post: return norms_[i]->forward(residual_add(x, f(x)));
    case NormPlacement::Pre: return residual_add(x, f(norms_[i]->forward(x)));
    case NormPlacement::None: return residual_add(x, f(x));
    case NormPlacement::Sandwich: return residual_add(x, post_norms_[i]->forward(f(norms_[i]->forward(x))));
    default: check_seq2seq_placement(config_.norm_placement);
  }
  return x;  // not reached
}

Var Seq2SeqLayer::forward(const Var& x, const Tensor& padding, uint64_t seed) {
  NL_CHECK(!decoder_, "model", "a decoder layer needs the encoder's output (memory)");
  const uint64_t site = self_attention_site(config_.n_layers, layer_, false);
  const Var h = sublayer(x, 0, [&](const Var& in) {  // (B,S,C)
    const ScopeGuard in_scope(attn_->scope());
    return attn_->forward(in, padding, dropout_site_seed(seed, site));
  });
  return sublayer(h, 1, [&](const Var& in) {
    const ScopeGuard in_scope(ffn_->scope());
    return ffn_->forward(in, dropout_site_seed(seed, site + 1));
  });
}

Var Seq2SeqLayer::forward(const Var& x, const Var& memory, const Tensor& memory_padding, uint64_t seed) {
  NL_CHECK(decoder_, "model", "an encoder layer takes no memory");
  const uint64_t site = self_attention_site(config_.n_layers, layer_, true);
  const Var h = sublayer(x, 0, [&](const Var& in) {  // (B,T,C), causal
    const ScopeGuard in_scope(attn_->scope());
    return attn_->forward(in, dropout_site_seed(seed, site));
  });
  const Var c = sublayer(h, 1, [&](const Var& in) {  // queries (B,T,C), keys and values memory (B,S,C)
    const ScopeGuard in_scope(cross_attn_->scope());
    return cross_attn_->forward(in, memory, memory_padding, dropout_site_seed(seed, seq2seq_cross_site(config_.n_layers, layer_)));
  });
  return sublayer(c, 2, [&](const Var& in) {
    const ScopeGuard in_scope(ffn_->scope());
    return ffn_->forward(in, dropout_site_seed(seed, site + 1));
  });
}

DecoderLayerCache Seq2SeqLayer::start_decoding(const Var& memory) {
  NL_CHECK(decoder_, "model", "an encoder layer has nothing to decode");
  const ScopeGuard in_scope(cross_attn_->scope());
  return {KeyValueCache{}, cross_attn_->memory_keys_values(memory)};
}

Var Seq2SeqLayer::step(const Var& x, int64_t position, DecoderLayerCache& cache, const Tensor& memory_padding) {
  NL_CHECK(decoder_, "model", "an encoder layer has nothing to decode");
  const Var h = sublayer(x, 0, [&](const Var& in) {  // (B,1,C), the newest position
    const ScopeGuard in_scope(attn_->scope());
    return attn_->step(in, position, cache.self);
  });
  const Var c = sublayer(h, 1, [&](const Var& in) {
    const ScopeGuard in_scope(cross_attn_->scope());
    return cross_attn_->step_cross(in, cache.memory, memory_padding);
  });
  return sublayer(c, 2, [&](const Var& in) {
    const ScopeGuard in_scope(ffn_->scope());
    return ffn_->forward(in, 0);
  });
}

namespace {
// x (B, ...) -> (rows.size(), ...), row i = x's row rows[i].
Tensor select_batch_rows(const Tensor& x, const std::vector<int64_t>& rows) {
  const int64_t batch = x.size(0), width = x.numel() / batch;
  std::vector<int32_t> ids;
  for (const int64_t row : rows) {
    NL_CHECK(row >= 0 && row < batch, "decode", "row {} is outside the batch of {}", row, batch);
    ids.push_back(static_cast<int32_t>(row));
  }
  Shape shape = x.shape();
  shape[0] = static_cast<int64_t>(rows.size());
  if (x.dtype() == DType::I32) {  // the padding mask, on the host
    const std::vector<int32_t> all = x.to_ints();
    std::vector<int32_t> kept;
    for (const int32_t row : ids) kept.insert(kept.end(), all.begin() + row * width, all.begin() + (row + 1) * width);
    return Tensor::from_ints(kept, shape).to(x.device());
  }
  const Tensor index = Tensor::from_ints(ids, {static_cast<int64_t>(ids.size())}).to(x.device());
  return ops::embedding(x.contiguous().reshape({batch, width}), index).reshape(shape);
}

Var select_batch_rows(const Var& x, const std::vector<int64_t>& rows) {
  return x.defined() ? constant(select_batch_rows(x.value(), rows)) : x;
}
}  // namespace

void DecoderState::select_rows(const std::vector<int64_t>& rows) {
  NL_CHECK(!rows.empty(), "decode", "select_rows needs at least one row");
  for (DecoderLayerCache& layer : layers) {
    layer.self.keys_t = select_batch_rows(layer.self.keys_t, rows);
    layer.self.values_t = select_batch_rows(layer.self.values_t, rows);
    layer.memory.keys = select_batch_rows(layer.memory.keys, rows);
    layer.memory.values = select_batch_rows(layer.memory.values, rows);
  }
  if (source_padding.defined()) source_padding = select_batch_rows(source_padding, rows);
}

}  // namespace normlab
