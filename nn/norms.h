// Norm: the normalization layer chosen by ModelConfig::norm_type, over the last axis (C). Its
// parameters, their initial values, its buffers and its forward are its row of the norm table
// (nn/norm_kinds.h; `normlab gradcheck --list` prints every row's formula).
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
