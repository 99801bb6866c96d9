// A run's whole configuration: the TOML sections [model] [optim] [schedule] [data] [train] [log].
// config/config.cpp parses and validates it (errors name file, line and key, with a
// suggestion for a near-miss name) and writes the resolved config back as TOML.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/named_enum.h"
#include "data/dataset.h"
#include "nn/model_config.h"
#include "optim/optimizer.h"
#include "optim/schedule.h"

namespace normlab {

// train.precision: where activations and matrix products run. Weights, gradients and optimizer
// state stay float32 (the master copy) in every precision; norm statistics, softmax and the loss
// are computed in float32 (autograd/autocast.h). fp16 adds dynamic loss scaling (optim/loss_scaler.h).
enum class Precision { Fp32, Bf16, Fp16 };
template <> struct EnumNames<Precision> {
  static constexpr std::array<NamedValue<Precision>, 3> values{
      {{Precision::Fp32, "fp32"}, {Precision::Bf16, "bf16"}, {Precision::Fp16, "fp16"}}};
};
// The 16-bit dtype a precision computes in (F32 for fp32).
constexpr DType compute_dtype(Precision p) {
  return p == Precision::Bf16 ? DType::BF16 : p == Precision::Fp16 ? DType::F16 : DType::F32;
}

struct TrainConfig {
  std::string name = "run";        // run directory name under out_dir
  std::string out_dir = "runs";
  int64_t steps = 2000;
  int64_t batch_size = 12;
  // Sequence-to-sequence data with a finite training split: batches of at most max_tokens source +
  // target tokens, length-bucketed, visited once per epoch (train/epoch_batches.h); 0 = batch_size
  // pairs drawn at random every step.
  int64_t max_tokens = 0;
  // With max_tokens: passes over the training split; train.steps becomes epochs x batches per epoch,
  // and validation, a checkpoint and the best-by-validation copy (RUN/best) come at each epoch's
  // end. 0 = train.steps decides.
  int64_t epochs = 0;
  int64_t context = 64;            // T of each training window (<= model.context_length)
  uint64_t seed = 1;               // data order and dropout (model.seed sets the weights)
  int threads = 0;                 // 0 = the idle cores (core/backend.h default_thread_count), at least 1
  Device device = Device::cpu();
  double divergence_loss = 0;      // a loss above this (or NaN/Inf anywhere) marks the run diverged;
                                   // 0: above 1.5 ln(vocab size) after schedule.warmup_steps (not step 0)
  bool fail_on_divergence = false; // exit non-zero when the run diverges
  int64_t checkpoint_every = 0;    // 0 = only at the end
  Precision precision = Precision::Fp32;
  double loss_scale_init = 65536.0;          // fp16: the first loss scale (2^16)
  int64_t loss_scale_growth_interval = 2000; // fp16: clean steps before the scale doubles
  bool detect_anomaly = false;     // name the first op whose output or gradient holds inf/NaN
                                   // (autograd/anomaly.h); the step then diverged
  bool flush_denormals = false;    // subnormal floats read and written as 0 (core/denormals.h)
};

struct LogConfig {
  int64_t every = 10;              // metrics.jsonl: train loss, lr, grad norm, tokens/s
  int64_t eval_every = 100;        // validation loss (0: only at the end and at each epoch's end)
  int64_t eval_batches = 4;
  int64_t grad_norm_every = 50;    // grad_norms.csv (always at step 0, before any update)
  bool tensorboard = false;        // also write the above as TensorBoard scalars (train/tensorboard.h)
  int64_t dynamics_steps = 0;      // dynamics.csv for updates 1..N (train/dynamics.h); 0 = off
  int64_t bleu_pairs = 0;          // encoder_decoder: final greedy BLEU on N validation pairs; 0 = off
  bool val_bleu = false;           // with train.epochs: greedy BLEU of the validation split per epoch
  int64_t test_beam = 0;           // with train.epochs: beam width of the final test decoding from RUN/best; 0 = off
  double test_length_penalty = 1.2;  // its length penalty (the paper's)
};

struct RunConfig {
  std::string preset;              // "" | gpt1 | gpt2 | llama | mistral | gemma | mixtral
  ModelConfig model;
  OptimConfig optim;
  ScheduleConfig schedule;
  DataConfig data;
  TrainConfig train;
  LogConfig log;
};

}  // namespace normlab
