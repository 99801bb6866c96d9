// Stochastic gradient descent with (heavy-ball) momentum and L2 weight decay, PyTorch's convention
// (Sutskever et al. 2013, "On the importance of initialization and momentum in deep learning"):
//   g' = g + wd p                 (wd = 0 for parameters weight_decay_applies() excludes)
//   b  = mu b + g'                (b starts at 0, so the first step has b = g'; no b when mu = 0)
//   p -= lr b
#include "core/backend.h"
#include "core/profiler.h"
#include "optim/optim_impl.h"

namespace normlab {

namespace {

class Sgd final : public SlotOptimizer {
 public:
  Sgd(const OptimConfig& config, NamedParams params)
      : SlotOptimizer(std::move(params), "sgd", {"momentum"}, /*count_steps=*/false), config_(config) {}

  void step(double lr) override {
    ProfileScope scope(OpFamily::Optimizer);
    NoGradGuard no_grad;
    for (size_t i = 0; i < params_.size(); ++i) {
      auto& [name, param] = params_[i];
      const Tensor grad = grad_for_update(param, name, "sgd");
      if (!grad.defined()) continue;
      const double wd = weight_decay_applies(param, config_) ? config_.weight_decay : 0.0;
      Tensor none;
      Tensor& buffer = config_.momentum > 0.0 ? slots_.get(0, i, param) : none;
      backend_for(param.value().device()).sgd_step(rate(i, lr), config_.momentum, wd, param.value(), grad, buffer);
    }
    ++steps_;
  }

 private:
  OptimConfig config_;
};

}  // namespace

std::unique_ptr<Optimizer> make_sgd(const OptimConfig& config, NamedParams params) {
  NL_CHECK(config.momentum >= 0.0 && config.momentum < 1.0, "sgd", "momentum must be in [0, 1), got {}",
           config.momentum);
  return std::make_unique<Sgd>(config, std::move(params));
}

}  // namespace normlab
