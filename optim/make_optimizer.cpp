// make_optimizer: the name in OptimConfig -> an optimizer, after checking the hyperparameters
// every optimizer shares (errors name the offending value).
#include "optim/optim_impl.h"

namespace normlab {

std::unique_ptr<Optimizer> make_optimizer(const OptimConfig& config, NamedParams params) {
  const std::string name = enum_name(config.name);
  NL_CHECK(config.weight_decay >= 0.0, name, "weight_decay must be >= 0, got {}", config.weight_decay);
  NL_CHECK(config.grad_clip >= 0.0, name, "grad_clip must be >= 0 (0 = off), got {}", config.grad_clip);
  if (config.name == OptimizerKind::Sgd) return make_sgd(config, std::move(params));
  NL_CHECK(config.beta1 >= 0.0 && config.beta1 < 1.0, name, "beta1 must be in [0, 1), got {}",
           config.beta1);
  NL_CHECK(config.beta2 >= 0.0 && config.beta2 < 1.0, name, "beta2 must be in [0, 1), got {}",
           config.beta2);
  NL_CHECK(config.eps > 0.0, name, "eps must be > 0, got {}", config.eps);
  if (config.name == OptimizerKind::RAdam) return make_radam(config, std::move(params));
  return make_adam(config, std::move(params), /*decoupled=*/config.name == OptimizerKind::AdamW);
}

}  // namespace normlab
