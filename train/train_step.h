// One training step, the only one in the project: the trainer, `normlab bench train` and the Xiong
// probes all call train_step, so "the bench times the trainer" and "the probes train like the
// suite" hold by construction. A step, in order:
//   1. dropout seed of (train.seed, step, rank);
//   2. forward and loss under train.precision (autocast to 16 bits for bf16/fp16), with the MoE
//      router loss when the model has one; under train.detect_anomaly the first op that makes
//      inf/NaN stops the step;
//   3. backward of the loss (fp16: of loss x the loss scale);
//   4. all-reduce of the gradients over the communicator (data parallel; one process: nothing);
//   5. unscale (fp16) and the finite check; hooks.on_gradients (the trainer logs norms here);
//   6. clipping to optim.grad_clip (the norm is always measured);
//   7. the divergence check: a non-finite loss or gradient norm, or a loss above
//      train.divergence_loss, stops here without an update;
//   8. fp16: the loss scaler's update (an overflowing step is skipped, the scale halved);
//   9. the optimizer's update at the schedule's lr for this step, and zero_grad.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "autograd/anomaly.h"
#include "data/dataset.h"
#include "dist/communicator.h"
#include "config/run_config.h"
#include "nn/transformer.h"
#include "optim/loss_scaler.h"
#include "optim/optimizer.h"

namespace normlab {

// What a step changes: the model's weights, the optimizer's state and the loss scale.
struct Learner {
  TransformerLM& model;
  Optimizer& optimizer;
  LossScaler& scaler;
};

// The loss scaler train.precision asks for (enabled for fp16).
LossScaler make_loss_scaler(const TrainConfig& train);

struct StepHooks {
  std::function<void()> after_forward;  // the loss exists and backward has not run (memory probes)
  std::function<void()> on_gradients;   // global, unscaled gradients, before clipping
};

// One step's numbers over the global batch, and why it diverged ("" if it did not).
struct StepResult {
  double loss = NAN;        // before the update; NaN until the forward has measured it
  double router_aux = NAN;  // the MoE load-balancing loss (unscaled); NaN without MoE
  double grad_norm = 0.0;   // the global norm before clipping
  double lr = 0.0;          // the schedule's lr at this step
  bool skipped = false;     // fp16: gradients overflowed, the update was skipped
  std::string divergence;   // why the step diverged; no update was made
  std::optional<AnomalyRecord> anomaly;  // train.detect_anomaly found inf/NaN (divergence says where)
};

// `batch` is this rank's shard of the step's global batch, on the model's device or the host.
StepResult train_step(Learner& learner, const RunConfig& config, const Batch& batch, int64_t step,
                      Communicator& comm = single_process(), const StepHooks& hooks = {});

}  // namespace normlab
