// Transformer language model with a configurable normalization placement: a decoder (causal
// attention, next-token targets) or, with model.arch "encoder", a bidirectional encoder whose head
// predicts the original tokens at masked positions (the targets come from data/masked_lm.cpp).
// Each block is attention then the FFN, each sub-layer wired into the residual stream by the
// placement's row (nn/placement.h: post, pre, none, sandwich, deepnorm, admin, mix_ln, b2t, and
// rows registered at run time); a final norm follows the stack where the row has one.
// model.arch "encoder_decoder": fairseq's Transformer (Xiong et al. 2020's translation model), an
// encoder stack over the source and a decoder stack over the target, their layers in the same
// placement row (nn/seq2seq_layer.h has the layers):
//   memory = encode(sources) = [encoder_norm](EncoderLayers(src_emb(sources) [x sqrt(d)] + positions))
//   logits = decode(ids, memory) = head([decoder_norm](DecoderLayers(tok_emb(ids) [x sqrt(d)] + positions, memory)))
// with tie_embeddings (fairseq's share_all_embeddings) one table tok_emb for the source, the target
// and the head; untied, src_emb, tok_emb and lm_head. Positions as the decoder's, applied to both
// stacks (learned: separate tables src_pos_emb and pos_emb). Parameter names: tok_emb.weight,
// [src_emb.weight], [src_pos_emb.weight, pos_emb.weight], encoder.N.*, [encoder_norm.*],
// decoder.N.*, [decoder_norm.*], [lm_head.weight].
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/model_config.h"
#include "nn/module.h"
#include "nn/moe.h"
#include "nn/seq2seq_layer.h"

namespace normlab {

class Embedding;

class TransformerLM : public Module {
 public:
  explicit TransformerLM(const ModelConfig& config);

  // ids (B, T) int32 -> logits (B, T, vocab). T <= context_length. Throws for arch
  // "encoder_decoder", which needs the sources (the overloads below).
  Var forward(const Tensor& ids);
  // Mean cross-entropy of forward(ids) against targets (B, T) int32 (ignore_index -1 excluded).
  Var loss(const Tensor& ids, const Tensor& targets);
  // What training minimises: loss(ids, targets), plus router_aux_loss_coef * router_aux_loss()
  // when ffn_type is "moe" and that coefficient is > 0 (Hugging Face's Mixtral loss with
  // output_router_logits), plus z_loss_coef * z_loss(logits, targets) when that is > 0. One forward.
  // With model.label_smoothing > 0 its first term is label_smoothed_cross_entropy instead.
  Var training_loss(const Tensor& ids, const Tensor& targets);

  // ---- arch "encoder_decoder" (the sequence-to-sequence model) ----
  // ids (B,T) int32 the decoder input (BOS then the target tokens), sources (B,S) int32 the source
  // tokens (right-padded), source_padding (B,S) int32 with 1 = pad, 0 = token, or an undefined Tensor
  // (no padding); S may differ from T, both <= context_length -> logits (B,T,V). Padded sources are
  // hidden from every attention (the encoder's and the decoder's cross-attention). For the other
  // archs, sources must be undefined (then these are the one-input calls).
  Var forward(const Tensor& ids, const Tensor& sources, const Tensor& source_padding);
  Var loss(const Tensor& ids, const Tensor& targets, const Tensor& sources, const Tensor& source_padding);
  Var training_loss(const Tensor& ids, const Tensor& targets, const Tensor& sources, const Tensor& source_padding);
  // The two halves of forward, so that a search can encode once and decode each prefix:
  // sources (B,S) -> memory (B,S,C); ids (B,T), memory (B,S,C), source_padding (B,S) -> logits (B,T,V).
  Var encode(const Tensor& sources, const Tensor& source_padding);
  Var decode(const Tensor& ids, const Var& memory, const Tensor& source_padding);
  // Incremental decoding (no tape, eval mode): the state for memory (B,S,C) and its source_padding,
  // then one position per decode_step: ids (B,1) int32, the tokens at position state.length ->
  // logits (B,1,V), what decode gives at that position for the whole prefix, each decoder layer's
  // keys and values kept in the state so that a step costs one position, not the prefix.
  DecoderState start_decoding(const Var& memory, const Tensor& source_padding);
  Var decode_step(const Tensor& ids, DecoderState& state);

  // Each block's routing in the last forward (ffn_type "moe"; empty otherwise or before a forward).
  std::vector<Routing> routings() const;
  // The load-balancing loss (nn/moe.h) of the last forward's routings, all layers pooled, unscaled.
  // Throws "[model] ..." unless ffn_type is "moe" and a forward has run.
  Var router_aux_loss() const;

  const ModelConfig& config() const { return config_; }
  // RMS of the residual stream entering each block during the last forward (n_layers values),
  // plus the stream leaving the last block as the final entry (n_layers + 1 in all); empty when
  // the last forward did not record it. encoder_decoder: the decoder stack's stream.
  const std::vector<double>& residual_rms() const { return residual_rms_; }
  // Whether forward records residual_rms(). Off by default: the probe reads one number back from
  // the device per layer, so the trainer turns it on only for the steps whose gradients it logs.
  void set_record_residual_rms(bool on) { record_residual_rms_ = on; }
  // Dropout seed for the next forward (the trainer advances it every step).
  void set_dropout_seed(uint64_t seed) { dropout_seed_ = seed; }

 private:
  struct Impl;
  // tokens (B,T) through `table` [x sqrt(d)] + the positions start .. start + T - 1 (learned table
  // `positions` or the config's fixed ones), then dropout at `site` -> (B,T,C)
  Var embed(const Tensor& ids, const Embedding& table, const Embedding* positions, uint64_t site, int64_t start = 0);
  Var logits_of(const Var& x);  // the head: (B,T,C) -> (B,T,V)
  void build_encoder_decoder();  // the encoder_decoder modules after tok_emb
  std::shared_ptr<Impl> impl_;
  ModelConfig config_;
  std::vector<double> residual_rms_;
  bool record_residual_rms_ = false;
  uint64_t dropout_seed_ = 0;
};

// The z-loss (PaLM, Chowdhery et al. 2022; Wortsman et al. 2023): logits (..., V), targets int32
// (...); the mean over the counted tokens (target != ignore_index, the tokens cross_entropy
// counts) of lse_t^2, lse_t = logsumexp of token t's logits. Its gradient is
// (2 lse_t / n) softmax(logits_t) on counted tokens, 0 on ignored ones (docs/derivations.md).
// 0 when no token counts. Throws "[z_loss] ..." naming both shapes when targets do not fit.
Var z_loss(const Var& logits, const Tensor& targets, int32_t ignore_index = -1);

// The original Transformer's position table (Vaswani et al. 2017), (T, C) in `dtype`, computed in
// double: PE(p, 2i) = sin(p w_i), PE(p, 2i + 1) = cos(p w_i), w_i = 10000^(-2i/C). Every entry is
// in [-1, 1] and the mean square over a row is 1/2.
Tensor sinusoidal_positions(int64_t t, int64_t c, DType dtype);

}  // namespace normlab
