// RAdam (Liu et al. 2020, "On the Variance of the Adaptive Learning Rate and Beyond"), with L2
// weight decay through the gradient as in PyTorch. With t the parameter's own step (1-based):
//   g' = g + wd p
//   m = b1 m + (1 - b1) g',   v = b2 v + (1 - b2) g'^2,   m^ = m / (1 - b1^t)
//   rho_inf = 2 / (1 - b2) - 1
//   rho_t   = rho_inf - 2 t b2^t / (1 - b2^t)      (length of the approximated simple moving average)
//   rho_t > 5 (the variance of the adaptive rate is tractable; PyTorch's threshold):
//     r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
//     l_t = sqrt(1 - b2^t) / (sqrt(v) + eps)
//     p -= lr r_t m^ l_t
//   otherwise (the first few steps): un-adapted momentum SGD,  p -= lr m^
// The scalar rectification is computed here in double; the elementwise part is the backend's
// radam_step kernel.
#include <cmath>

#include "core/backend.h"
#include "core/profiler.h"
#include "optim/optim_impl.h"

namespace normlab {

namespace {

// r_t for step t, or 0 while rho_t <= 5 (the un-adapted phase).
double radam_rectification(double beta2, int64_t t) {
  const double rho_inf = 2.0 / (1.0 - beta2) - 1.0;
  const double beta2_t = std::pow(beta2, static_cast<double>(t));
  const double rho_t = rho_inf - 2.0 * static_cast<double>(t) * beta2_t / (1.0 - beta2_t);
  if (rho_t <= 5.0) return 0.0;
  return std::sqrt((rho_t - 4.0) * (rho_t - 2.0) * rho_inf /
                   ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t));
}

class RAdam final : public SlotOptimizer {
 public:
  RAdam(const OptimConfig& config, NamedParams params)
      : SlotOptimizer(std::move(params), "radam", {"m", "v"}, /*count_steps=*/true), config_(config) {}

  void step(double lr) override {
    ProfileScope scope(OpFamily::Optimizer);
    NoGradGuard no_grad;
    for (size_t i = 0; i < params_.size(); ++i) {
      auto& [name, param] = params_[i];
      const Tensor grad = grad_for_update(param, name, "radam");
      if (!grad.defined()) continue;
      RAdamArgs args{};
      args.lr = rate(i, lr);
      args.beta1 = config_.beta1;
      args.beta2 = config_.beta2;
      args.eps = config_.eps;
      args.weight_decay = weight_decay_applies(param, config_) ? config_.weight_decay : 0.0;
      args.step = slots_.next_step(i);
      args.rectification = radam_rectification(config_.beta2, args.step);
      backend_for(param.value().device())
          .radam_step(args, param.value(), grad, slots_.get(0, i, param), slots_.get(1, i, param));
    }
    ++steps_;
  }

 private:
  OptimConfig config_;
};

}  // namespace

std::unique_ptr<Optimizer> make_radam(const OptimConfig& config, NamedParams params) {
  return std::make_unique<RAdam>(config, std::move(params));
}

}  // namespace normlab
