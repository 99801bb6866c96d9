#include "nn/norms.h"

#include <algorithm>

#include "autograd/ops.h"
#include "nn/layers.h"

namespace normlab {

const std::vector<std::string>& norm_type_names() {
  static const std::vector<std::string> names = {"layernorm", "rmsnorm", "rmsnorm_unit_offset",
                                                 "groupnorm", "batchnorm", "none"};
  return names;
}

Norm::Norm(const ModelConfig& config, int64_t dim)
    : type_(config.norm_type), eps_(config.norm_eps), groups_(config.norm_groups) {
  const auto& names = norm_type_names();
  NL_CHECK(std::find(names.begin(), names.end(), type_) != names.end(), "model",
           "norm_type must be one of {}, got '{}'", fmt::join(names, ", "), type_);
  if (type_ == "none") return;
  NL_CHECK(eps_ > 0, "model", "norm_eps must be > 0 for norm_type '{}', got {}", type_, eps_);
  const DType dtype = parameter_dtype(config);
  const double gain = type_ == "rmsnorm_unit_offset" ? 0.0 : 1.0;
  register_parameter("weight", parameter(Tensor::full({dim}, gain, dtype)));
  const bool has_bias = config.bias && type_ != "rmsnorm" && type_ != "rmsnorm_unit_offset";
  if (has_bias) register_parameter("bias", parameter(Tensor::zeros({dim}, dtype)));
  if (type_ == "groupnorm")
    NL_CHECK(groups_ > 0 && dim % groups_ == 0, "model",
             "norm_groups must be positive and divide d_model {}, got {}", dim, groups_);
  if (type_ == "batchnorm") {
    register_buffer("running_mean", Tensor::zeros({dim}, dtype));
    register_buffer("running_var", Tensor::ones({dim}, dtype));
  }
}

Var Norm::forward(const Var& x) {
  const Var weight = parameter_slot("weight"), bias = parameter_slot("bias");  // bias may be undefined
  if (type_ == "layernorm") return layer_norm(x, weight, bias, eps_);
  if (type_ == "rmsnorm") return rms_norm(x, weight, eps_, false);
  if (type_ == "rmsnorm_unit_offset") return rms_norm(x, weight, eps_, true);
  if (type_ == "groupnorm") return group_norm(x, weight, bias, groups_, eps_);
  if (type_ == "batchnorm")
    // the buffers as currently held (Module::to may have moved them); updated in place
    return batch_norm(x, weight, bias, buffer_slot("running_mean"), buffer_slot("running_var"), is_training(),
                      0.1, eps_);
  return x;  // none
}

}  // namespace normlab
