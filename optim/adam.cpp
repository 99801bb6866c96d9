// Adam (Kingma & Ba 2015, "Adam: A Method for Stochastic Optimization") and AdamW (Loshchilov &
// Hutter 2019, "Decoupled Weight Decay Regularization"). With t the parameter's own step (1-based)
// and wd = 0 for parameters weight_decay_applies() excludes:
//   Adam:  g' = g + wd p  (L2 decay through the gradient);   AdamW: g' = g
//   m = b1 m + (1 - b1) g'
//   v = b2 v + (1 - b2) g'^2
//   m^ = m / (1 - b1^t),  v^ = v / (1 - b2^t)
//   AdamW only: p -= lr wd p  (decoupled: scaled by lr, not by the adaptive denominator)
//   p -= lr m^ / (sqrt(v^) + eps)
#include "core/backend.h"
#include "core/profiler.h"
#include "optim/optim_impl.h"

namespace normlab {

namespace {

class Adam final : public SlotOptimizer {
 public:
  Adam(const OptimConfig& config, NamedParams params, bool decoupled)
      : SlotOptimizer(std::move(params), decoupled ? "adamw" : "adam", {"m", "v"}, /*count_steps=*/true),
        config_(config), decoupled_(decoupled) {}

  void step(double lr) override {
    ProfileScope scope(OpFamily::Optimizer);
    NoGradGuard no_grad;
    const char* op = decoupled_ ? "adamw" : "adam";
    for (size_t i = 0; i < params_.size(); ++i) {
      auto& [name, param] = params_[i];
      const Tensor grad = grad_for_update(param, name, op);
      if (!grad.defined()) continue;
      AdamArgs args{};
      args.lr = rate(i, lr);
      args.beta1 = config_.beta1;
      args.beta2 = config_.beta2;
      args.eps = config_.eps;
      args.weight_decay = weight_decay_applies(param, config_) ? config_.weight_decay : 0.0;
      args.step = slots_.next_step(i);
      args.decoupled = decoupled_;
      backend_for(param.value().device())
          .adam_step(args, param.value(), grad, slots_.get(0, i, param), slots_.get(1, i, param));
    }
    ++steps_;
  }

 private:
  OptimConfig config_;
  bool decoupled_;
};

}  // namespace

std::unique_ptr<Optimizer> make_adam(const OptimConfig& config, NamedParams params, bool decoupled) {
  return std::make_unique<Adam>(config, std::move(params), decoupled);
}

}  // namespace normlab
