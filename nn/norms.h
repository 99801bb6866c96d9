// Norm: the normalization layer chosen by ModelConfig::norm_type, over the last axis (C). Its
// parameters, their initial values and its forward are its row of nn/norm_kinds.h:
//   layernorm            (x - mean) * rstd * weight + bias      "weight" (C,) = 1, "bias" (C,) = 0 if bias
//   rmsnorm              x / rms(x) * weight                    "weight" (C,) = 1
//   rmsnorm_unit_offset  x / rms(x) * (1 + weight)   (Gemma)    "weight" (C,) stored 0, acts as 1
//   groupnorm            layernorm within norm_groups groups    "weight", "bias" if bias
//   batchnorm            per channel over all B*T rows          "weight", "bias" if bias; buffers
//                        "running_mean" (C,) = 0, "running_var" (C,) = 1 (used in eval mode)
//   dyt                  tanh(alpha x) * weight + bias          "alpha" (1,) = 0.5, "weight", "bias" if bias
//   none                 identity, no parameters
#pragma once
#include <string>
#include <vector>

#include "nn/model_config.h"
#include "nn/module.h"
#include "nn/norm_kinds.h"

namespace normlab {

class Norm : public Module {
 public:
  // Checks eps and groups ("[model] norm_groups must ...").
  Norm(const ModelConfig& config, int64_t dim);
  // x (..., C) -> (..., C): the fused op when the norm has one, else the composed forward.
  Var forward(const Var& x);
  // The composed forward from plain ops (the specification the fused op is tested against).
  Var forward_composed(const Var& x);
  NormType type() const { return kind_->type; }

 private:
  NormCall call() const;  // the parameters (under autocast, 16-bit copies) and settings
  const NormKind* kind_;
  std::vector<std::string> param_names_;
  double eps_;
  int64_t groups_;
};

}  // namespace normlab
