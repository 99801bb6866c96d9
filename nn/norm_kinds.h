// What each normalization is, in one table (one row per norm): its name in config files, its
// parameters and their initial values, what its backward keeps alive, and its forward composed of
// plain differentiable ops (autograd/ops.h). The composed forward is always there: with it alone a
// norm builds into every model, trains, runs under autocast and on every backend, and is
// gradient-checked. A fused op (autograd/ops/norm.cpp over a backend kernel pair) is an optional
// speed-up behind the same row, tested against the composed forward (tests/nn/norm_kinds_test.cpp).
// The Norm module (nn/norms.h), the config's norm_type names, the initialisation (nn/init.cpp), the
// memory estimate (train/memory_estimate.cpp) and the gradient checks read this table; adding a
// norm is a row in nn/norm_kinds.cpp (docs/adding_a_norm.md), or, at run time, one call of
// register_norm_kind (Python's normlab.register_norm).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "autograd/var.h"
#include "nn/model_config.h"

namespace normlab {

struct NormParam {
  std::string name;         // "weight", "bias", "alpha", ...: the parameter's name in the module
  bool per_channel = true;  // shape (C,); false: one learnable scalar, shape (1,)
  bool needs_bias = false;  // exists only when model.bias (LayerNorm's beta, ...)
  double initial = 1.0;     // every element's initial value
};

// One call of a norm's forward: its parameters by name (an absent one, e.g. no bias, undefined)
// and the model's settings.
struct NormCall {
  std::vector<std::pair<std::string, Var>> params;
  double eps = 1e-5;
  int64_t groups = 1;  // model.norm_groups for a grouped row, else 1
  bool training = true;
  Tensor running_mean, running_var;  // batchnorm's buffers (the fused op updates them in place)
  Var param(std::string_view name) const;
};

using NormForward = std::function<Var(const Var& x, const NormCall& call)>;  // x (..., C) -> (..., C)

struct NormKind {
  NormType type{};           // set by the table: a built-in row's enum value, or the next free id
  std::string name;          // the config value of model.norm_type
  std::string formula;       // one line, for docs and `normlab gradcheck --list`
  std::vector<NormParam> params;
  // What training keeps alive per norm, for the memory estimate: (rows, C) tensors (the output
  // included) and float statistics per row (per row and group when grouped).
  double kept_tensors = 1, kept_row_statistics = 0;
  bool grouped = false;             // statistics per group of model.norm_groups channels
  bool running_statistics = false;  // batchnorm's running_mean and running_var buffers
  NormForward composed;             // from plain ops: always present
  NormForward fused;                // a fused op, or empty (the composed forward runs)
};

// Every row: the built-in ones in NormType order, then those registered at run time.
std::vector<const NormKind*> norm_kinds();
const NormKind& norm_kind(NormType type);
// The row a config names; a name registered twice means its latest row.
std::optional<NormType> find_norm_kind(std::string_view name);
// Adds a row at run time and returns its type. The name must not be a built-in one; registering a
// name again adds a new row that the name then means (models built before keep the old one).
// Rows live until the process ends. Throws "[register_norm] ..." on a bad row.
NormType register_norm_kind(NormKind kind);
// The parameters a norm of this type has under this config (those needing a bias only with model.bias).
std::vector<NormParam> norm_params(const ModelConfig& config);

}  // namespace normlab
