// Optimizers update parameters in place from their .grad(), under no-grad. The learning rate is
// passed to every step() by the caller (from a schedule, optim/schedule.h).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/var.h"
#include "core/named_enum.h"

namespace normlab {

enum class OptimizerKind { Sgd, Adam, AdamW, RAdam };
template <> struct EnumNames<OptimizerKind> {
  static constexpr std::array<NamedValue<OptimizerKind>, 4> values{{{OptimizerKind::Sgd, "sgd"},
                                                                     {OptimizerKind::Adam, "adam"},
                                                                     {OptimizerKind::AdamW, "adamw"},
                                                                     {OptimizerKind::RAdam, "radam"}}};
};

struct OptimConfig {
  OptimizerKind name = OptimizerKind::AdamW;  // the key optim.name
  double lr = 1e-3;            // lr_max of the schedule
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double momentum = 0.0;       // sgd
  double weight_decay = 0.0;
  // AdamW: parameters excluded from weight decay by default: norm gains/biases, all biases, embeddings.
  bool decay_norms_and_biases = false;
  bool decay_embeddings = false;
  double grad_clip = 0.0;      // global-norm clipping threshold; 0 = off
  double grad_clip_value = 0.0;  // each gradient element clamped to [-v, v] after the norm clip; 0 = off
  std::string layer_lr_scale;  // per-block learning-rate factors (optim/lr_multipliers.h); "" = none
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual void step(double lr) = 0;
  void zero_grad();
  // One factor per parameter (in construction order) multiplying the rate step() is given
  // (optim/lr_multipliers.h); empty = 1 for all. Throws on a count that does not match.
  void set_lr_multipliers(std::vector<double> multipliers);
  int64_t step_count() const { return steps_; }
  // Optimizer state for checkpoints: ("m.<param name>", tensor), ..., plus the step count.
  virtual std::vector<std::pair<std::string, Tensor>> state() const = 0;
  virtual void load_state(const std::vector<std::pair<std::string, Tensor>>& state, int64_t steps) = 0;

 protected:
  explicit Optimizer(std::vector<std::pair<std::string, Var>> params) : params_(std::move(params)) {}
  // The rate of parameter i: lr times its multiplier.
  double rate(size_t i, double lr) const { return lr_multipliers_.empty() ? lr : lr * lr_multipliers_[i]; }
  std::vector<std::pair<std::string, Var>> params_;
  std::vector<double> lr_multipliers_;
  int64_t steps_ = 0;
};

// Builds the optimizer named by config over named parameters (their roles decide weight-decay
// exclusion; the names key the optimizer's state).
std::unique_ptr<Optimizer> make_optimizer(const OptimConfig& config,
                                          std::vector<std::pair<std::string, Var>> params);

// Whether weight decay applies to `param`, by its role (autograd/param_role.h). Excluded unless
// the config opts in: norm parameters and biases unless decay_norms_and_biases; token and position
// embeddings unless decay_embeddings. Every optimizer applies this rule to its weight_decay.
bool weight_decay_applies(const Var& param, const OptimConfig& config);

// Clips gradients to a global L2 norm of max_norm when max_norm > 0; always returns the norm
// measured before clipping.
double clip_grad_norm(const std::vector<Var>& params, double max_norm);
// Clamps every gradient element to [-max_value, max_value] (max_value > 0); returns how many
// elements it changed. Non-finite elements are left as they are (the divergence check sees them).
int64_t clip_grad_value(const std::vector<Var>& params, double max_value);

}  // namespace normlab
