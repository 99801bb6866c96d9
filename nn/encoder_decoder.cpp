// arch "encoder_decoder" of TransformerLM (nn/transformer.h): its modules, encode and decode, and
// incremental decoding (start_decoding, decode_step), which caches each decoder layer's keys and
// values so that a step costs one position.
#include <numeric>

#include "autograd/ops.h"
#include "autograd/tape.h"
#include "nn/transformer_impl.h"

namespace normlab {

// The encoder_decoder model's modules after tok_emb, registered in the order of the names in
// nn/transformer.h.
void TransformerLM::build_encoder_decoder() {
  Impl& m = *impl_;
  const ModelConfig& config = config_;
  const DType dtype = parameter_dtype(config);
  const auto reg = [this](const std::string& name, auto module) { return register_module(name, module); };
  if (!config.tie_embeddings)
    m.src_emb = reg("src_emb", std::make_shared<Embedding>(config.vocab_size, config.d_model, dtype,
                                                          ParamKind::TokenEmbedding, config.padding_idx));
  if (config.position_embedding == PositionEmbedding::Learned) {
    const ParamKind positions = ParamKind::PositionEmbedding;
    m.src_pos_emb =
        reg("src_pos_emb", std::make_shared<Embedding>(config.context_length, config.d_model, dtype, positions));
    m.pos_emb = reg("pos_emb", std::make_shared<Embedding>(config.context_length, config.d_model, dtype, positions));
  }
  const bool final_norms = placement_has_final_norm(config.norm_placement);
  m.encoder = reg("encoder", std::make_shared<Seq2SeqStack>(config, false));
  if (final_norms) m.encoder_norm = reg("encoder_norm", std::make_shared<Norm>(config, config.d_model));
  m.decoder = reg("decoder", std::make_shared<Seq2SeqStack>(config, true));
  if (final_norms) m.decoder_norm = reg("decoder_norm", std::make_shared<Norm>(config, config.d_model));
}

// ---- encoder_decoder ----

Var TransformerLM::encode(const Tensor& sources, const Tensor& source_padding) {
  NL_CHECK(config_.arch == ModelArch::EncoderDecoder, "model", "encode needs arch 'encoder_decoder', got '{}'",
           config_.arch);
  check_ids(sources, "sources", config_.context_length);
  NL_CHECK(!source_padding.defined() ||
               (source_padding.dtype() == DType::I32 && source_padding.shape() == sources.shape()),
           "model", "source_padding must be undefined or int32 with the shape of sources {}, got {}",
           shape_str(sources.shape()), source_padding.describe());
  const Impl& m = *impl_;
  Var x = embed(sources, m.src_emb ? *m.src_emb : *m.tok_emb, m.src_pos_emb.get(),
                seq2seq_source_embedding_site(config_.n_layers));  // (B,S,C)
  for (const auto& layer : m.encoder->layers()) {
    const ScopeGuard in_layer(layer->scope());
    x = layer->forward(x, source_padding, dropout_seed_);
  }
  if (m.encoder_norm) {
    const ScopeGuard in_norm(m.encoder_norm->scope());
    x = m.encoder_norm->forward(x);
  }
  return x;
}

Var TransformerLM::decode(const Tensor& ids, const Var& memory, const Tensor& source_padding) {
  NL_CHECK(config_.arch == ModelArch::EncoderDecoder, "model", "decode needs arch 'encoder_decoder', got '{}'",
           config_.arch);
  check_ids(ids, "ids", config_.context_length);
  NL_CHECK(memory.dim() == 3 && memory.size(0) == ids.size(0) && memory.size(2) == config_.d_model, "model",
           "memory must be (B = {}, S, C = {}), got {}", ids.size(0), config_.d_model, shape_str(memory.shape()));
  const Shape padding_shape = {memory.size(0), memory.size(1)};
  NL_CHECK(!source_padding.defined() || source_padding.shape() == padding_shape, "model",
           "source_padding must be undefined or (B, S) = ({}, {}), got {}", memory.size(0), memory.size(1),
           source_padding.describe());
  const Impl& m = *impl_;
  Var x = embed(ids, *m.tok_emb, m.pos_emb.get(), 0);  // (B,T,C)
  residual_rms_.clear();
  for (const auto& layer : m.decoder->layers()) {
    if (record_residual_rms_) residual_rms_.push_back(rms(x));
    const ScopeGuard in_layer(layer->scope());
    x = layer->forward(x, memory, source_padding, dropout_seed_);
  }
  if (record_residual_rms_) residual_rms_.push_back(rms(x));
  if (m.decoder_norm) {
    const ScopeGuard in_norm(m.decoder_norm->scope());
    x = m.decoder_norm->forward(x);
  }
  return logits_of(x);  // (B,T,V)
}

Var TransformerLM::forward(const Tensor& ids, const Tensor& sources, const Tensor& source_padding) {
  if (config_.arch != ModelArch::EncoderDecoder) {
    NL_CHECK(!sources.defined() && !source_padding.defined(), "model",
             "arch '{}' takes no sources (only 'encoder_decoder' does)", config_.arch);
    return forward(ids);
  }
  NL_CHECK(sources.defined(), "model", "arch 'encoder_decoder' needs sources (B, S), got an undefined tensor");
  check_ids(ids, "ids", config_.context_length);
  check_ids(sources, "sources", config_.context_length);
  NL_CHECK(sources.size(0) == ids.size(0), "model", "sources {} and ids {} must have the same batch size",
           shape_str(sources.shape()), shape_str(ids.shape()));
  return decode(ids, encode(sources, source_padding), source_padding);
}

DecoderState TransformerLM::start_decoding(const Var& memory, const Tensor& source_padding) {
  NL_CHECK(config_.arch == ModelArch::EncoderDecoder, "model", "decoding needs arch 'encoder_decoder', got '{}'",
           config_.arch);
  NL_CHECK(!grad_enabled() && !is_training(), "model", "incremental decoding runs without the tape and in eval mode");
  NL_CHECK(memory.dim() == 3 && memory.size(2) == config_.d_model, "model", "memory must be (B, S, C = {}), got {}",
           config_.d_model, shape_str(memory.shape()));
  NL_CHECK(!source_padding.defined() || source_padding.shape() == Shape({memory.size(0), memory.size(1)}), "model",
           "source_padding must be undefined or (B, S) = ({}, {}), got {}", memory.size(0), memory.size(1),
           source_padding.describe());
  DecoderState state;
  state.source_padding = source_padding;
  for (const auto& layer : impl_->decoder->layers()) {
    const ScopeGuard in_layer(layer->scope());
    state.layers.push_back(layer->start_decoding(memory));
  }
  return state;
}

Var TransformerLM::decode_step(const Tensor& ids, DecoderState& state) {
  NL_CHECK(!grad_enabled() && !is_training(), "model", "incremental decoding runs without the tape and in eval mode");
  NL_CHECK(!state.layers.empty() && ids.defined() && ids.dtype() == DType::I32 && ids.dim() == 2 && ids.size(1) == 1 &&
               ids.size(0) == state.layers.front().memory.keys.size(0),
           "model", "a decoding step takes ids int32 (B, 1) for the state's {} rows, got {}",
           state.layers.empty() ? 0 : state.layers.front().memory.keys.size(0), ids.describe());
  NL_CHECK(state.length < config_.context_length, "model", "the decoder has filled its context_length = {}",
           config_.context_length);
  const Impl& m = *impl_;
  Var x = embed(ids, *m.tok_emb, m.pos_emb.get(), 0, state.length);  // (B,1,C)
  const auto& layers = m.decoder->layers();
  for (size_t l = 0; l < layers.size(); ++l) {
    const ScopeGuard in_layer(layers[l]->scope());
    x = layers[l]->step(x, state.length, state.layers[l], state.source_padding);
  }
  if (m.decoder_norm) {
    const ScopeGuard in_norm(m.decoder_norm->scope());
    x = m.decoder_norm->forward(x);
  }
  ++state.length;
  return logits_of(x);  // (B,1,V)
}

}  // namespace normlab
