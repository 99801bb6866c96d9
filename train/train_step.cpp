#include "train/train_step.h"

#include <cmath>

#include "autograd/autocast.h"
#include "autograd/ops.h"
#include "autograd/tape.h"
#include "dist/data_parallel.h"
#include "optim/lr_multipliers.h"
#include "optim/schedule.h"

namespace normlab {

namespace {

// Rank 0 keeps the seed a single process uses, so its shard's dropout masks are the single
// process's first rows; other ranks draw masks of their own (dropout > 0 is not equal to one
// process, see data_parallel.h).
uint64_t dropout_seed(const RunConfig& c, int64_t step, int rank) {
  const uint64_t seed = c.train.seed * 7777777ull + static_cast<uint64_t>(step);
  return rank == 0 ? seed : seed ^ (0x9E3779B97F4A7C15ull * static_cast<uint64_t>(rank));
}

// Why step `step` (0-based: the update number step + 1) diverged ("" if it did not): NaN/Inf
// anywhere, or a loss above train.divergence_loss; its default 0 means 1.5 ln V (V = the
// vocabulary size, chance = ln V) once the warmup is over (the Xiong suite's threshold; the suite
// itself counts it from step 100, xiong/training.h apply_divergence_rule); never at
// step 0, whose loss is the initialization's (no update has been made: nothing has diverged yet).
std::string divergence_reason(double loss_value, double grad_norm, const RunConfig& c, int64_t step) {
  if (!std::isfinite(loss_value)) return fmt::format("loss is {}", loss_value);
  if (c.train.divergence_loss > 0 && loss_value > c.train.divergence_loss)
    return fmt::format("loss {:.4g} exceeds train.divergence_loss {:.4g}", loss_value, c.train.divergence_loss);
  const double relative_limit = 1.5 * std::log(static_cast<double>(c.model.vocab_size));
  if (c.train.divergence_loss == 0 && step >= std::max<int64_t>(c.schedule.warmup_steps, 1) && loss_value > relative_limit)
    return fmt::format("loss {:.4g} exceeds 1.5 ln V = {:.4g} after the warmup (V = {}; the default of "
                       "train.divergence_loss)", loss_value, relative_limit, c.model.vocab_size);
  if (!std::isfinite(grad_norm)) return fmt::format("gradient norm is {}", grad_norm);
  return "";
}

// The MoE load-balancing loss of the forward just run (unscaled), read without recording anything.
double router_aux_value(const TransformerLM& model) {
  NoGradGuard no_grad;
  return model.router_aux_loss().item();
}

// Forward and backward: the loss (and MoE router loss) over the global batch into `out`, this
// rank's gradients into the parameters. Under train.detect_anomaly the first op whose output or
// gradient holds inf/NaN stops them, and its record is returned.
std::optional<AnomalyRecord> forward_backward(Learner& learner, const RunConfig& c, const Batch& batch,
                                              int64_t counted, Communicator& comm, const StepHooks& hooks,
                                              StepResult& out) {
  const AnomalyModeGuard anomaly_mode(c.train.detect_anomaly);
  try {
    // Cross-entropy, plus router_aux_loss_coef times the MoE load-balancing loss when that is on
    // (each rank's own tokens' balance: under MPI not equal to one process's, see data_parallel.h),
    // plus z_loss_coef times the z-loss (mean lse^2 of the logits) when that is on.
    Var loss;
    {
      AutocastGuard autocast(compute_dtype(c.train.precision));
      loss = learner.model.training_loss(batch.inputs, batch.targets, batch.sources, batch.source_padding);
    }
    out.loss = global_mean(loss.item(), counted, comm);
    if (c.model.ffn_type == FfnType::Moe) out.router_aux = global_mean(router_aux_value(learner.model), counted, comm);
    if (hooks.after_forward) hooks.after_forward();
    backward(learner.scaler.enabled() ? scale(loss, learner.scaler.scale()) : loss);  // fp16: the scaled loss
  } catch (const AnomalyError& e) {
    Tape::current().clear();  // a forward stopped half way leaves its nodes behind
    return e.record;
  }
  return std::nullopt;
}

}  // namespace

LossScaler make_loss_scaler(const TrainConfig& train) {
  return LossScaler({train.precision == Precision::Fp16, train.loss_scale_init, train.loss_scale_growth_interval});
}

StepResult train_step(Learner& learner, const RunConfig& c, const Batch& shard, int64_t step, Communicator& comm,
                      const StepHooks& hooks) {
  TransformerLM& model = learner.model;
  model.set_dropout_seed(dropout_seed(c, step, comm.rank()));
  const int64_t counted = comm.size() > 1 ? counted_tokens(shard) : 0;  // the weight of this rank's mean
  const Device device = c.train.device;
  const Batch batch = batch_on(shard, device);
  StepResult out;
  out.lr = learning_rate(c.schedule, c.optim.lr, step, c.train.steps);
  if ((out.anomaly = forward_backward(learner, c, batch, counted, comm, hooks, out))) {
    out.divergence = out.anomaly->message();
    learner.optimizer.zero_grad();
    return out;
  }
  allreduce_gradients(model, counted, comm);  // from here on every rank holds the global gradient
  std::vector<Var> params;
  std::vector<std::string> names;
  for (const auto& [name, p] : model.named_parameters()) params.push_back(p), names.push_back(name);
  const bool finite_gradients = learner.scaler.unscale(params);
  if (hooks.on_gradients) hooks.on_gradients();
  out.grad_norm = clip_grad_norm(params, c.optim.grad_clip);
  if (c.optim.grad_clip_value > 0) clip_grad_value(params, c.optim.grad_clip_value);
  // Interventions (issue 38): per-layer rates, warmup of some parameter groups only.
  if (const LrMultiplierSpec spec{c.optim.layer_lr_scale, c.schedule.warmup_groups, c.model.n_layers}; spec.active())
    learner.optimizer.set_lr_multipliers(lr_multipliers(params, spec, c.schedule, c.optim.lr, step, c.train.steps));
  // Every rank decides alike: the loss and the gradients it looks at are the all-reduced ones.
  out.divergence = divergence_reason(out.loss, finite_gradients ? out.grad_norm : 0.0, c, step);
  if (out.divergence.empty() && learner.scaler.enabled()) {  // fp16: an overflow skips the update, halves the scale
    learner.scaler.update(finite_gradients);
    out.skipped = !finite_gradients;
    if (learner.scaler.scale() < 1.0)
      out.divergence = fmt::format("float16 gradients overflow even at loss scale {}", learner.scaler.scale() * 2);
  }
  if (out.divergence.empty() && !out.skipped) {
    NoGradGuard no_grad;
    learner.optimizer.step(out.lr);
  }
  learner.optimizer.zero_grad();  // a diverged step leaves no gradient behind either
  return out;
}

}  // namespace normlab
