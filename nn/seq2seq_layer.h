// The layers of model.arch "encoder_decoder" (fairseq's Transformer, the model of Xiong et al.
// 2020): an encoder layer is bidirectional self-attention with the source padding mask, then the
// FFN; a decoder layer is causal self-attention, then cross-attention (queries from the decoder
// stream, keys and values from the encoder's output, the source padding mask), then the FFN. Each
// sub-layer sits in the config's placement row as the decoder-only blocks' do (nn/placement.h: post
// is fairseq's normalize_before false, pre its true with encoder_norm and decoder_norm after the
// stacks); DeepNorm's and Admin's scales take the encoder-decoder's constants of their papers.
// Children, registered in this order, the norms as the layer's wiring has them:
//   encoder.N: "norm1", ["post_norm1"] (self-attention), "norm2", ["post_norm2"] (FFN), "attn", "ffn"
//   decoder.N: "norm1", ["post_norm1"] (self-attention), "norm2", ["post_norm2"] (cross-attention),
//              "norm3", ["post_norm3"] (FFN), "attn", "cross_attn", "ffn"
// Dropout sites (nn/layers.h's dropout_site_seed), distinct from each other and, for the decoder,
// the decoder-only model's: decoder embedding 0, decoder layer l's self-attention 1 + 2l and FFN
// 2 + 2l; then, with L layers per stack, decoder layer l's cross-attention 2L + 1 + l, the encoder
// embedding 3L + 1, encoder layer l's attention 3L + 2 + 2l and FFN 3L + 3 + 2l.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "nn/attention.h"
#include "nn/ffn.h"
#include "nn/model_config.h"
#include "nn/module.h"
#include "nn/placement.h"

namespace normlab {

// The dropout sites above, for layer l of n_layers.
uint64_t seq2seq_cross_site(int64_t n_layers, int64_t l);
uint64_t seq2seq_source_embedding_site(int64_t n_layers);

// A decoder layer's keys and values in incremental decoding (nn/attention.h).
struct DecoderLayerCache {
  KeyValueCache self;
  MemoryKeyValues memory;
};

// The decoder's state in incremental decoding (TransformerLM::start_decoding, decode_step).
struct DecoderState {
  std::vector<DecoderLayerCache> layers;
  Tensor source_padding;  // (B,S) int32 or undefined
  int64_t length = 0;     // positions decoded so far
  // Keeps batch row rows[i] as row i, rows may repeat (beam search's surviving hypotheses).
  // Throws "[decode] ..." for a row outside the batch.
  void select_rows(const std::vector<int64_t>& rows);
};

class Seq2SeqLayer : public PlacedLayer {
 public:
  // decoder: the decoder layer (three sub-layers), else the encoder layer (two).
  Seq2SeqLayer(const ModelConfig& config, int64_t layer, bool decoder);
  // Encoder layer: x (B,S,C), padding (B,S) int32 (1 = pad) or undefined -> (B,S,C).
  Var forward(const Var& x, const Tensor& padding, uint64_t dropout_seed);
  // Decoder layer: x (B,T,C), memory (B,S,C) the encoder's output, memory_padding (B,S) or
  // undefined -> (B,T,C).
  Var forward(const Var& x, const Var& memory, const Tensor& memory_padding, uint64_t dropout_seed);
  // Decoder layer, incremental decoding: the cache for memory (B,S,C), then one step per position,
  // x (B,1,C) at `position` -> (B,1,C), what forward gives at that position.
  DecoderLayerCache start_decoding(const Var& memory);
  Var step(const Var& x, int64_t position, DecoderLayerCache& cache, const Tensor& memory_padding);
  const std::shared_ptr<FeedForwardLayer>& ffn() const { return ffn_; }

 private:
  bool decoder_;
  std::shared_ptr<CausalSelfAttention> attn_, cross_attn_;  // cross_attn_: decoder only
  std::shared_ptr<FeedForwardLayer> ffn_;
};

}  // namespace normlab
