#include "nn/norms.h"

#include <algorithm>

#include "autograd/autocast.h"
#include "autograd/ops.h"
#include "nn/layers.h"

namespace normlab {

Norm::Norm(const ModelConfig& config, int64_t dim)
    : type_(config.norm_type), eps_(config.norm_eps), groups_(config.norm_groups) {
  if (type_ == NormType::None) return;
  NL_CHECK(eps_ > 0, "model", "norm_eps must be > 0 for norm_type '{}', got {}", enum_name(type_), eps_);
  const DType dtype = parameter_dtype(config);
  const double gain = type_ == NormType::RmsNormUnitOffset ? 0.0 : 1.0;
  register_parameter("weight", parameter(Tensor::full({dim}, gain, dtype)));
  const bool has_bias = config.bias && type_ != NormType::RmsNorm && type_ != NormType::RmsNormUnitOffset;
  if (has_bias) register_parameter("bias", parameter(Tensor::zeros({dim}, dtype)));
  if (type_ == NormType::GroupNorm)
    NL_CHECK(groups_ > 0 && dim % groups_ == 0, "model",
             "norm_groups must be positive and divide d_model {}, got {}", dim, groups_);
  if (type_ == NormType::BatchNorm) {
    register_buffer("running_mean", Tensor::zeros({dim}, dtype));
    register_buffer("running_var", Tensor::ones({dim}, dtype));
  }
}

Var Norm::forward(const Var& x) {
  // bias may be undefined; under autocast the norm computes on 16-bit copies (statistics in float32)
  const Var weight = autocast(parameter_slot("weight")), bias = autocast(parameter_slot("bias"));
  switch (type_) {
    case NormType::LayerNorm: return layer_norm(x, weight, bias, eps_);
    case NormType::RmsNorm: return rms_norm(x, weight, eps_, false);
    case NormType::RmsNormUnitOffset: return rms_norm(x, weight, eps_, true);
    case NormType::GroupNorm: return group_norm(x, weight, bias, groups_, eps_);
    case NormType::BatchNorm:
      // the buffers as currently held (Module::to may have moved them); updated in place
      return batch_norm(x, weight, bias, buffer_slot("running_mean"), buffer_slot("running_var"), is_training(),
                        0.1, eps_);
    case NormType::None: return x;
  }
  fail("norm", "invalid norm type {}", static_cast<int>(type_));
}

}  // namespace normlab
