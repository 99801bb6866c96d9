// Measurements at initialization (no training), for the Xiong et al. 2020 reproduction:
//  * Theorem 1: ||dL/dW2|| of the last layer's FFN vs depth L, per placement;
//  * the per-layer W1/W2 gradient profile (mean of per-batch norms, and the norm of the
//    batch-mean gradient, "the scale of the expected gradient");
//  * the residual stream's ||x_l||^2 / d entering each layer (Lemma 2's band for Pre-LN), and
//    Lemma 2's Post-LN quantity ||x_{l,5}||^2 / d = ||h + FFN_l(h)||^2 / d for an LN output h;
//  * Theorem 1's two factors at the last LayerNorm: its input's norm and the gradient at its output;
//  * Admin's amplification: how far the output moves after one Adam update, vs depth;
//  * the step time of a model (RMSNorm vs LayerNorm).
// Inputs are random tokens (the theory's setting); each (seed, batch) pair is reproducible.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/random.h"
#include "core/tensor.h"

#include "config/run_config.h"
#include "nn/model_config.h"
#include "nn/transformer.h"

namespace normlab::xiong {

struct ProbeBatch {
  int64_t batch = 8, context = 64;
  int64_t batches = 4;  // mini-batches per model
  // Rescale the embeddings at init so that the stream entering the first block has unit mean
  // square per coordinate (the theory's ||x_1||^2 = d per row): see
  // rescale_embeddings_to_unit_variance. With tied embeddings this also scales the logits, so use
  // it with model.tie_embeddings = false.
  bool unit_variance_input = false;
};

// The theory setting's input: token embeddings times the model's multiplier, plus positions, with
// mean square 1 per coordinate (||x_1||^2 = d per row; tokens and positions are independent at
// init, so their mean squares add). Learned positions: the token and position tables scaled by one
// factor. Fixed sinusoidal table (no parameter, mean square 1/2 per row): only the tokens are
// scaled, to mean square 1 - 1/2. Rope / none (nothing added at the input): the tokens to 1.
void rescale_embeddings_to_unit_variance(TransformerLM& model);

// The two factors Theorem 1's proof multiplies, at the last LayerNorm before the head:
//   Pre-LN:  final_norm (its input is the residual stream after the last block);
//   Post-LN: there is no final norm; the last block's norm2, the LayerNorm after the FFN
//            residual (its input z = h + FFN(h), Lemma 2's x_{L,5}).
// ||dLoss/dW2|| of the last FFN is about ||ReLU(h W1)|| ||dLoss/dy|| sqrt(d) / ||z_row||: the W2
// gradient falls as the LN's input grows and rises with the gradient at its output.
struct FinalNormFactors {
  std::string site;              // "final_norm" or "blocks.<L-1>.norm2"
  // ||x||_F / sqrt(rows) of the LN's input x (rows = B*T): the root-mean-square row norm (its
  // square / d is Lemma 2's ||x_L||^2 / d), mean over batches.
  double input_norm = 0.0;
  double output_grad_norm = 0.0;  // ||dLoss/dy||_F of the LN's output y (B*T, C), mean over batches
  double loss = 0.0;              // the loss of that forward, mean over batches (equals the model's)
};

// The model `config` initialises (and, with probe.unit_variance_input, rescales) measured on
// probe_batches(data_seed): a second forward through the library's own blocks, norms, attention
// and FFN bound to the model's parameters stops at the last LayerNorm's input; its output is made a
// leaf, so that backward through head and loss leaves dLoss/dy in its grad. Post-LN and Pre-LN
// only; needs dropout 0.
FinalNormFactors final_norm_factors(const ModelConfig& config, const ProbeBatch& probe, uint64_t data_seed);

struct LayerGrads {
  std::vector<double> w1_mean_norm, w2_mean_norm;      // mean over batches of ||grad||_F
  std::vector<double> w1_norm_of_mean, w2_norm_of_mean;  // ||mean over batches of grad||_F
  std::vector<double> attn_mean_norm;                  // q,k,v,o together, mean of per-batch norms
  std::vector<double> residual_sq_per_d;               // ||x_l||^2 / d entering layer l (+ final), batch mean
  // Lemma 2's x_{l,5} = h + FFN_l(h) of a Post-LN layer, with h a LayerNorm output (zero mean, unit
  // variance per row) and layer l's initial FFN weights: ||x_{l,5}||^2 / d, one value per layer.
  std::vector<double> post_ffn_sum_sq_per_d;
};

// The probe's random-token batches (inputs, targets), independent uniform tokens, reproducible from
// data_seed: what measure_layer_grads feeds the model (and what the PyTorch check replays).
std::vector<std::pair<Tensor, Tensor>> probe_batches(int64_t vocab, const ProbeBatch& probe, uint64_t data_seed);

// The probe model: `base` with this placement, depth and seed (initialization).
ModelConfig probe_model(const ModelConfig& base, const std::string& placement, int64_t layers, int seed);

// One model (config.seed) measured over probe.batches random-token batches.
LayerGrads measure_layer_grads(const ModelConfig& config, const ProbeBatch& probe, uint64_t data_seed);

// (batch, context) token ids drawn uniformly from [0, vocab): the probes' batches.
Tensor random_tokens(int64_t vocab, int64_t batch, int64_t context, Generator& gen);

// Relative output change ||F(x, W') - F(x, W)|| / ||F(x, W)|| of the logits after one train_step
// (train/train_step.h: config's optimizer, schedule at step 0, clipping and precision) from
// initialization on one batch of random tokens (Liu et al. 2020's amplification effect).
double output_change_after_one_step(const RunConfig& config, const ProbeBatch& probe, uint64_t data_seed);

// Wall milliseconds of one training step (the trainer's, train/train_step.h: its model,
// optimizer, schedule, precision and clipping) for each config on one batch of random tokens,
// timed in the same process, alternating between the configs `repeats` times after `warmup`
// untimed steps each: [config][repeat], so that samples with the same index were taken side by side.
std::vector<std::vector<double>> step_ms_samples(const std::vector<RunConfig>& configs, const ProbeBatch& probe,
                                                 int warmup, int repeats);

// Milliseconds of one Norm forward + backward on a (rows, C) input for each norm type
// (config.norm_type replaced), alternating as above: [norm type][repeat].
std::vector<std::vector<double>> norm_ms_samples(const ModelConfig& config, const std::vector<NormType>& norm_types,
                                                 int64_t rows, int warmup, int repeats);

// Adam's relative update of each block over the first `steps` steps of the run `config` describes
// (its data, optimizer, schedule, precision and clipping: the trainer's own step): ||W_{t+1} - W_t||_F / ||W_t||_F
// over every parameter of block l together. Returns [step][layer].
std::vector<std::vector<double>> block_update_ratios(const RunConfig& config, int steps);

// Least-squares slope of log(y) on log(x): the fitted exponent of y ~ x^slope.
double loglog_slope(const std::vector<double>& x, const std::vector<double>& y);
// Least-squares slope of y on x.
double linear_slope(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace normlab::xiong
