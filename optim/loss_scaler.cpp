#include "optim/loss_scaler.h"

#include <cmath>

#include "core/backend.h"
#include "core/ops.h"

namespace normlab {

LossScaler::LossScaler(const LossScaleConfig& config) : config_(config) {
  NL_CHECK(std::isfinite(config.initial_scale) && config.initial_scale > 0, "loss_scale",
           "initial scale must be a positive finite number, got {}", config.initial_scale);
  NL_CHECK(config.growth_interval >= 1, "loss_scale", "growth interval must be >= 1, got {}",
           config.growth_interval);
  if (config_.enabled) state_.scale = config_.initial_scale;
}

void LossScaler::set_state(const LossScaleState& state) {
  NL_CHECK(std::isfinite(state.scale) && state.scale > 0, "loss_scale",
           "scale must be a positive finite number, got {}", state.scale);
  NL_CHECK(state.clean_steps >= 0 && state.skipped_steps >= 0, "loss_scale",
           "step counts must be >= 0, got clean {} skipped {}", state.clean_steps, state.skipped_steps);
  state_ = state;
}

static bool all_gradients_finite(const std::vector<Var>& params) {
  for (const Var& p : params) {
    const Tensor& g = p.grad();
    if (g.defined() && !backend_for(g.device()).all_finite(g)) return false;
  }
  return true;
}

bool LossScaler::unscale(const std::vector<Var>& params) const {
  if (!config_.enabled) return true;
  for (const Var& p : params) {
    Tensor g = p.grad();
    if (g.defined()) backend_for(g.device()).unary(UnaryOp::Scale, g, g, 1.0 / state_.scale);
  }
  return all_gradients_finite(params);
}

void LossScaler::update(bool finite) {
  if (!config_.enabled) return;
  if (!finite) {
    state_.scale /= 2;
    state_.clean_steps = 0;
    ++state_.skipped_steps;
  } else if (++state_.clean_steps >= config_.growth_interval) {
    state_.scale *= 2;
    state_.clean_steps = 0;
  }
}

}  // namespace normlab
