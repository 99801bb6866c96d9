#include "nn/seq2seq_layer.h"

#include "autograd/ops.h"
#include "core/ops.h"
#include "nn/layers.h"

namespace normlab {

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
    : PlacedLayer(config, layer, decoder ? decoder_stack(config) : encoder_stack(config)), decoder_(decoder) {
  add_sublayer_norms(decoder ? 3 : 2);
  attn_ = register_module("attn", std::make_shared<CausalSelfAttention>(config, decoder));
  if (decoder) cross_attn_ = register_module("cross_attn", std::make_shared<CausalSelfAttention>(config, false));
  ffn_ = register_module("ffn", make_feed_forward(config));
  declare_roles({{attn_.get(), ParamGroup::Attention},
                 {cross_attn_.get(), ParamGroup::CrossAttention},
                 {ffn_.get(), ParamGroup::Ffn}});
}

Var Seq2SeqLayer::forward(const Var& x, const Tensor& padding, uint64_t seed) {
  NL_CHECK(!decoder_, "model", "a decoder layer needs the encoder's output (memory)");
  const uint64_t site = self_attention_site(config_.n_layers, layer_, false);
  const Var h = sublayer(0, x, x, [&](const Var& in) {  // (B,S,C)
    const ScopeGuard in_scope(attn_->scope());
    return attn_->forward(in, padding, dropout_site_seed(seed, site));
  });
  return sublayer(1, h, x, [&](const Var& in) {
    const ScopeGuard in_scope(ffn_->scope());
    return ffn_->forward(in, dropout_site_seed(seed, site + 1));
  });
}

Var Seq2SeqLayer::forward(const Var& x, const Var& memory, const Tensor& memory_padding, uint64_t seed) {
  NL_CHECK(decoder_, "model", "an encoder layer takes no memory");
  const uint64_t site = self_attention_site(config_.n_layers, layer_, true);
  const Var h = sublayer(0, x, x, [&](const Var& in) {  // (B,T,C), causal
    const ScopeGuard in_scope(attn_->scope());
    return attn_->forward(in, dropout_site_seed(seed, site));
  });
  const Var c = sublayer(1, h, x, [&](const Var& in) {  // queries (B,T,C), keys and values memory (B,S,C)
    const ScopeGuard in_scope(cross_attn_->scope());
    return cross_attn_->forward(in, memory, memory_padding, dropout_site_seed(seed, seq2seq_cross_site(config_.n_layers, layer_)));
  });
  return sublayer(2, c, x, [&](const Var& in) {
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
  const Var h = sublayer(0, x, x, [&](const Var& in) {  // (B,1,C), the newest position
    const ScopeGuard in_scope(attn_->scope());
    return attn_->step(in, position, cache.self);
  });
  const Var c = sublayer(1, h, x, [&](const Var& in) {
    const ScopeGuard in_scope(cross_attn_->scope());
    return cross_attn_->step_cross(in, cache.memory, memory_padding);
  });
  return sublayer(2, c, x, [&](const Var& in) {
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
