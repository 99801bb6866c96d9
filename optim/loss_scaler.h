// Dynamic loss scaling for float16 training (Micikevicius et al. 2018, "Mixed Precision Training";
// the same rule as PyTorch's GradScaler). float16 gradients below 2^-24 flush to zero, so the loss is
// multiplied by a scale S before backward and the float32 master gradients divided by S after it.
// Each step:
//   gradients all finite:  unscale them; after `growth_interval` such steps in a row, S <- 2 S;
//   any inf/NaN:           skip the update, zero the gradients, S <- S / 2, restart the count.
// bfloat16 (float32's range) and float32 need no scaling: a disabled scaler keeps S = 1 and never
// skips. The state (scale, clean steps in a row, skipped steps so far) is saved in checkpoints.
#pragma once
#include <cstdint>
#include <vector>

#include "autograd/var.h"

namespace normlab {

struct LossScaleState {
  double scale = 1.0;
  int64_t clean_steps = 0;    // finite steps since the scale last changed
  int64_t skipped_steps = 0;  // updates skipped for inf/NaN gradients, since the run began
};

struct LossScaleConfig {
  bool enabled = false;
  double initial_scale = 65536.0;  // 2^16, as PyTorch
  int64_t growth_interval = 2000;  // clean steps before the scale doubles
};

class LossScaler {
 public:
  explicit LossScaler(const LossScaleConfig& config = {});
  bool enabled() const { return config_.enabled; }
  double scale() const { return state_.scale; }
  const LossScaleState& state() const { return state_; }
  // Restores a checkpoint's state; throws "[loss_scale] ..." for a scale that is not a positive
  // finite number or negative counts.
  void set_state(const LossScaleState& state);

  // After backward of (loss * scale()): divides every gradient by the scale (exact: a power of
  // two) and returns whether all of them are finite. Disabled: true without a pass over the
  // gradients (fp32/bf16 runs see a non-finite gradient in the gradient norm instead).
  bool unscale(const std::vector<Var>& params) const;
  // After unscale: finite counts a clean step (the scale doubles after growth_interval of them in a
  // row); not finite halves the scale and counts a skipped step. Disabled: nothing.
  void update(bool finite);

 private:
  LossScaleConfig config_;
  LossScaleState state_;
};

}  // namespace normlab
