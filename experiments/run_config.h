// A run's whole configuration: the TOML sections [model] [optim] [schedule] [data] [train] [log].
// experiments/config.cpp parses and validates it (errors name file, line and key, with a
// suggestion for a near-miss name) and writes the resolved config back as TOML.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/device.h"
#include "data/dataset.h"
#include "nn/model_config.h"
#include "optim/optimizer.h"
#include "optim/schedule.h"

namespace normlab {

struct TrainConfig {
  std::string name = "run";        // run directory name under out_dir
  std::string out_dir = "runs";
  int64_t steps = 2000;
  int64_t batch_size = 12;
  int64_t context = 64;            // T of each training window (<= model.context_length)
  uint64_t seed = 1;               // data order and dropout (model.seed sets the weights)
  int threads = 0;                 // 0 = library default
  Device device = Device::cpu();
  double divergence_loss = 1e4;    // a loss above this (or NaN/Inf anywhere) marks the run diverged
  bool fail_on_divergence = false; // exit non-zero when the run diverges
  int64_t checkpoint_every = 0;    // 0 = only at the end
  bool detect_anomaly = false;     // name the first op whose output or gradient holds inf/NaN
                                   // (autograd/anomaly.h); the step then diverged
};

struct LogConfig {
  int64_t every = 10;              // metrics.jsonl: train loss, lr, grad norm, tokens/s
  int64_t eval_every = 100;        // validation loss
  int64_t eval_batches = 4;
  int64_t grad_norm_every = 50;    // grad_norms.csv (always at step 0, before any update)
  bool tensorboard = false;        // also write the above as TensorBoard scalars (experiments/tensorboard.h)
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
