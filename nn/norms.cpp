#include "nn/norms.h"

#include "autograd/autocast.h"
#include "autograd/ops.h"
#include "nn/activation_record.h"
#include "nn/layers.h"

namespace normlab {

Norm::Norm(const ModelConfig& config, int64_t dim)
    : kind_(&norm_kind(config.norm_type)), eps_(config.norm_eps), groups_(kind_->grouped ? config.norm_groups : 1) {
  if (kind_->type == NormType::None) return;
  NL_CHECK(eps_ > 0, "model", "norm_eps must be > 0 for norm_type '{}', got {}", kind_->name, eps_);
  const DType dtype = parameter_dtype(config);
  for (const NormParam& p : norm_params(config)) {
    register_parameter(std::string(p.name), parameter(Tensor::full({p.per_channel ? dim : 1}, p.initial, dtype)),
                       {.kind = ParamKind::NormParam, .group = ParamGroup::Norms, .norm_initial = p.initial});
    param_names_.emplace_back(p.name);
  }
  if (kind_->grouped)
    NL_CHECK(groups_ > 0 && dim % groups_ == 0, "model",
             "norm_groups must be positive and divide d_model {}, got {}", dim, groups_);
  if (kind_->running_statistics) {
    register_buffer("running_mean", Tensor::zeros({dim}, dtype));
    register_buffer("running_var", Tensor::ones({dim}, dtype));
  }
}

NormCall Norm::call() const {
  NormCall c;
  // under autocast the norm computes on 16-bit copies of its parameters (statistics in float32)
  for (const std::string& name : param_names_) c.params.emplace_back(name, autocast(parameter_slot(name)));
  c.eps = eps_;
  c.groups = groups_;
  c.training = is_training();
  if (kind_->running_statistics) {  // the buffers as currently held (Module::to may have moved them)
    c.running_mean = buffer_slot("running_mean");
    c.running_var = buffer_slot("running_var");
  }
  return c;
}

Var Norm::forward(const Var& x) {
  if (ActivationRecorder* recorder = activation_recorder())
    recorder->add(std::string(scope()) + ".input_rms", host_rms(x.value()));
  const NormForward& forward = kind_->fused ? kind_->fused : kind_->composed;
  return forward(x, call());
}

Var Norm::forward_composed(const Var& x) { return kind_->composed(x, call()); }

}  // namespace normlab
