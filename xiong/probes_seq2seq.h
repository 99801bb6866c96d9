// The per-layer gradient profile at initialization of an encoder-decoder (model.arch
// "encoder_decoder", the paper's own translation model): E2's probe on both stacks.
#pragma once
#include <cstdint>
#include <vector>

#include "data/dataset.h"
#include "nn/model_config.h"
#include "nn/transformer.h"
#include "xiong/probes.h"

namespace normlab::xiong {

// ||mean over batches of dL/dW||_F of each layer's FFN W1 and W2 ("the scale of the expected
// gradient", the paper's Figure 3(a,b)), per stack, layer 0 first.
struct StackGrads {
  std::vector<double> w1_norm_of_mean, w2_norm_of_mean;
};
struct Seq2SeqLayerGrads {
  StackGrads encoder, decoder;
};

// `config` (arch encoder_decoder) initialised, fed probe.batches batches of independent uniform
// random source, decoder-input and target tokens (B = probe.batch, S = T = probe.context, no
// padding), reproducible from data_seed.
Seq2SeqLayerGrads measure_seq2seq_layer_grads(const ModelConfig& config, const ProbeBatch& probe, uint64_t data_seed);

// The same for `model` (initialised, arch encoder_decoder) on the given batches (real training
// batches: Xiong v5's init probe), the loss being model.loss (cross-entropy, no label smoothing).
Seq2SeqLayerGrads measure_seq2seq_layer_grads(TransformerLM& model, const std::vector<Batch>& batches);

}  // namespace normlab::xiong
