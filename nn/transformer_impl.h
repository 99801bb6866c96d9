// The private parts of TransformerLM shared by its two source files: nn/transformer.cpp (the
// decoder and encoder archs, the losses) and nn/encoder_decoder.cpp (arch "encoder_decoder").
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nn/block.h"
#include "nn/layers.h"
#include "nn/norms.h"
#include "nn/seq2seq_layer.h"
#include "nn/transformer.h"

namespace normlab {

// "blocks": children named "0", "1", ...
class BlockList : public Module {
 public:
  void append(std::shared_ptr<Block> block) {
    blocks_.push_back(register_module(std::to_string(blocks_.size()), std::move(block)));
  }
  const std::vector<std::shared_ptr<Block>>& blocks() const { return blocks_; }

 private:
  std::vector<std::shared_ptr<Block>> blocks_;
};

// "encoder" or "decoder" of an encoder_decoder model: children "0", "1", ...
class Seq2SeqStack : public Module {
 public:
  Seq2SeqStack(const ModelConfig& config, bool decoder) {
    const int64_t depth = decoder ? config.n_layers : encoder_layers_of(config);
    for (int64_t l = 0; l < depth; ++l)
      layers_.push_back(register_module(std::to_string(l), std::make_shared<Seq2SeqLayer>(config, l, decoder)));
  }
  const std::vector<std::shared_ptr<Seq2SeqLayer>>& layers() const { return layers_; }

 private:
  std::vector<std::shared_ptr<Seq2SeqLayer>> layers_;
};

struct TransformerLM::Impl {
  std::shared_ptr<Embedding> tok_emb, pos_emb;  // pos_emb: learned positions only
  std::shared_ptr<BlockList> blocks;            // decoder, encoder archs
  std::shared_ptr<Norm> final_norm;  // null for post, none, deepnorm
  std::shared_ptr<Linear> lm_head;   // null when tied
  // encoder_decoder: src_emb null when tied (the source uses tok_emb), src_pos_emb learned only
  std::shared_ptr<Embedding> src_emb, src_pos_emb;
  std::shared_ptr<Seq2SeqStack> encoder, decoder;
  std::shared_ptr<Norm> encoder_norm, decoder_norm;  // pre, sandwich
};

// ids int32 (B, T) with 1 <= T <= context_length (sources: (B, S)); `what` names them in the error.
void check_ids(const Tensor& ids, const char* what, int64_t context_length);

// sqrt(mean(x^2)), computed on the host side of the tape (records nothing).
double rms(const Var& x);

}  // namespace normlab
