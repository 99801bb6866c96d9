// The dynamics log (log.dynamics_steps = N): one row of dynamics.csv for each of updates 1..N with
// the quantities that the explanations of why Post-LN needs warmup point at (Xiong et al. 2020's
// gradients near the output, Liu et al. 2020's output change, RAdam's variance of Adam's
// adaptive rate, Wortsman et al. 2023's attention-logit growth). Row t, per block N (an
// encoder-decoder's blocks are encoder.N and decoder.N, in place of blocks.N):
//   blocks.N.grad.attn, .grad.ffn    L2 norm of update t's gradient (global, unscaled, before
//                                    clipping) over the block's attention / FFN parameters
//   decoder.N.grad.cross_attn        the same over a decoder block's cross-attention
//   blocks.N.grad.w1, .grad.w2       the same for ffn.w1.weight and ffn.w2.weight (Figure 3)
//   blocks.N.<norm>.input_rms        RMS of each norm's input              } the probe batch's
//   blocks.N.attn.logit_max, .entropy  attention logits and entropy       } forward at W_t
//                                    (nn/activation_record.h)
//   blocks.N.adam.sqrt_v_mean, .sqrt_v_max   Adam, AdamW, RAdam: sqrt(v_hat) after update t over
//                                    the block's parameter elements, v_hat = v / (1 - beta2^k), k
//                                    the parameter's own step count
//   blocks.N.update_ratio            ||W_(t+1) - W_t||_F / ||W_t||_F over the block's parameters
// and for the whole model (first columns):
//   probe_loss      the probe batch's cross-entropy at W_t
//   logit_max       max |z| of the probe batch's output logits at W_t
//   output_change   RMS over (B,T,V) of z(W_(t+1)) - z(W_t) on the probe batch (Admin's
//                   |F(x, W_(t+1)) - F(x, W_t)|)
// The probe batch is one validation batch of train.batch_size from a generator of its own (the
// training stream is untouched), evaluated without dropout and under train.precision. One probe
// forward per row: the forward at W_(t+1) is the next row's forward at W_t. A row is written only
// for an update that was applied (a diverged step has none).
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/run_config.h"
#include "data/dataset.h"
#include "nn/transformer.h"
#include "optim/optimizer.h"
#include "train/run_dir.h"
#include "train/tensorboard.h"

namespace normlab {

// The probe batch of a run with config c: one validation batch of train.batch_size drawn from a
// generator of its own (seeded from train.seed, not the validation loss's).
Batch dynamics_probe_batch(const RunConfig& c, const Dataset& data);

// The sub-layer whose dynamics columns (grad.attn, grad.cross_attn, grad.ffn) a layer parameter's
// gradient adds to: "attn", "cross_attn" or "ffn" by its role's group; "" for a layer's norms and
// for every parameter outside the layers.
std::string dynamics_sublayer(const ParamRole& role);

class DynamicsLog {
 public:
  // Opens run_dir/dynamics.csv (keep_through_step as GradNormWriter's); events, when given, gets
  // every value as the TensorBoard scalar "dynamics/<column>".
  DynamicsLog(const RunConfig& c, const Dataset& data, const std::filesystem::path& run_dir,
              std::optional<int64_t> keep_through_step, TensorBoardWriter* events);

  // Whether update `update` (counted from 1) gets a row.
  bool covers(int64_t update) const { return update <= steps_; }
  // Before the update: the probe forward at W_t (unless the last row measured it) and a copy of
  // the block weights.
  void before_update(TransformerLM& model);
  // From the step's gradient hook (global, unscaled gradients).
  void record_gradients(const TransformerLM& model);
  // After the update: Adam's state, the update sizes, the probe forward at W_(t+1); writes row `update`.
  void after_update(TransformerLM& model, const Optimizer& optimizer, int64_t update);

 private:
  struct Probe {
    Tensor logits;  // (B,T,V)
    std::vector<std::pair<std::string, double>> values;  // probe_loss, logit_max, the activations
  };
  Probe probe(TransformerLM& model) const;

  int64_t steps_;
  Precision precision_;
  double beta2_;  // Adam's bias correction of v
  StepCsvWriter csv_;
  TensorBoardWriter* events_;
  Batch probe_batch_;
  std::optional<Probe> at_current_;  // the probe at the weights the next update starts from
  std::vector<std::pair<Var, Tensor>> weights_before_;  // the layers' parameters and their values at W_t
  std::vector<std::pair<std::string, double>> gradient_values_;
};

}  // namespace normlab
