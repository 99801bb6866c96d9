// What each normalization is, in one table (one row per NormType): its parameters and their
// initial values, what its backward keeps alive, and its forward composed of plain differentiable
// ops (autograd/ops.h). The composed forward is always there: with it alone a norm builds into
// every model, trains, runs under autocast and on every backend, and is gradient-checked. A fused
// op (autograd/ops/norm.cpp over a backend kernel pair) is an optional speed-up behind the same row,
// tested against the composed forward (tests/nn/norm_kinds_test.cpp).
// The Norm module (nn/norms.h), the initialisation (nn/init.cpp), the memory estimate
// (train/memory_estimate.cpp) and the gradient checks read this table; adding a norm is a
// row here and a name in nn/model_config.h (docs/adding_a_norm.md).
#pragma once
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "autograd/var.h"
#include "nn/model_config.h"

namespace normlab {

struct NormParam {
  std::string_view name;    // "weight", "bias", "alpha", ...: the parameter's name in the module
  bool per_channel = true;  // shape (C,); false: one learnable scalar, shape (1,)
  bool needs_bias = false;  // exists only when model.bias (LayerNorm's beta, ...)
  double (*initial)(int64_t dim) = nullptr;  // its initial value for a norm over `dim` channels
};

// One call of a norm's forward: its parameters by name (an absent one, e.g. no bias, undefined)
// and the model's settings.
struct NormCall {
  std::vector<std::pair<std::string_view, Var>> params;
  double eps = 1e-5;
  int64_t groups = 1;
  bool training = true;
  Tensor running_mean, running_var;  // batchnorm's buffers (the fused op updates them in place)
  Var param(std::string_view name) const;
};

using NormForward = Var (*)(const Var& x, const NormCall& call);  // x (..., C) -> (..., C)

struct NormKind {
  NormType type;
  std::string_view formula;  // one line, for docs and `normlab gradcheck --list`
  std::vector<NormParam> params;
  // What training keeps alive per norm, for the memory estimate: (rows, C) tensors (the output
  // included) and float statistics per row (per row and group for GroupNorm).
  double kept_tensors = 1, kept_row_statistics = 0;
  bool running_statistics = false;  // batchnorm's running_mean and running_var buffers
  NormForward composed = nullptr;   // from plain ops: always present
  NormForward fused = nullptr;      // a fused op, or nullptr (the composed forward runs)
};

// Every row, in NormType order.
const std::vector<NormKind>& norm_kinds();
const NormKind& norm_kind(NormType type);
// The parameters a norm of this type has under this config (those needing a bias only with model.bias).
std::vector<NormParam> norm_params(const ModelConfig& config);

}  // namespace normlab
