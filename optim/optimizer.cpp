// What every optimizer shares: zero_grad, the weight-decay exclusion rule, the per-parameter
// buffers and their checkpoint form (optim/optim_impl.h).
#include <cmath>
#include <map>
#include <set>

#include "core/profiler.h"
#include "optim/optim_impl.h"

namespace normlab {

void Optimizer::zero_grad() {
  ProfileScope scope(OpFamily::Optimizer);
  for (auto& [name, param] : params_) param.zero_grad();
}

void Optimizer::set_lr_multipliers(std::vector<double> multipliers) {
  NL_CHECK(multipliers.empty() || multipliers.size() == params_.size(), "optimizer",
           "{} learning-rate multipliers for {} parameters", multipliers.size(), params_.size());
  lr_multipliers_ = std::move(multipliers);
}

bool weight_decay_applies(const Var& param, const OptimConfig& config) {
  const ParamKind kind = param.role().kind;
  const bool is_norm_or_bias = kind == ParamKind::NormParam || kind == ParamKind::Bias;
  const bool is_embedding = kind == ParamKind::TokenEmbedding || kind == ParamKind::PositionEmbedding;
  if (is_norm_or_bias && !config.decay_norms_and_biases) return false;
  if (is_embedding && !config.decay_embeddings) return false;
  return true;
}

ParamSlots::ParamSlots(std::string optimizer, std::vector<std::string> slots,
                       const NamedParams& params, bool count_steps)
    : optimizer_(std::move(optimizer)), slots_(std::move(slots)), count_steps_(count_steps),
      buffers_(slots_.size(), std::vector<Tensor>(params.size())), steps_(params.size(), 0) {
  std::set<std::string> seen;
  for (const auto& [name, param] : params) {
    NL_CHECK(param.defined(), optimizer_, "parameter '{}' is an undefined Var", name);
    NL_CHECK(seen.insert(name).second, optimizer_,
             "two parameters are both named '{}' (names key the optimizer state)", name);
  }
}

Tensor& ParamSlots::get(size_t slot, size_t index, const Var& param) {
  Tensor& buffer = buffers_[slot][index];
  if (!buffer.defined()) buffer = Tensor::zeros(param.shape(), param.dtype(), param.value().device());
  return buffer;
}

void ParamSlots::append_state(const NamedParams& params, NamedTensors& out) const {
  for (size_t i = 0; i < params.size(); ++i) {
    for (size_t s = 0; s < slots_.size(); ++s) {
      if (buffers_[s][i].defined()) out.emplace_back(slots_[s] + "." + params[i].first, buffers_[s][i]);
    }
    if (count_steps_ && steps_[i] > 0) {
      out.emplace_back("step." + params[i].first,
                       Tensor::scalar(static_cast<double>(steps_[i]), DType::F64));
    }
  }
}

void ParamSlots::load(const NamedParams& params, const NamedTensors& state, int64_t global_steps) {
  std::map<std::string, size_t> index_of;
  for (size_t i = 0; i < params.size(); ++i) index_of[params[i].first] = i;
  std::vector<std::vector<Tensor>> buffers(slots_.size(), std::vector<Tensor>(params.size()));
  std::vector<int64_t> steps(params.size(), -1);
  for (const auto& [key, tensor] : state) {
    const size_t dot = key.find('.');
    NL_CHECK(dot != std::string::npos, optimizer_, "state key '{}' is not '<slot>.<parameter>'", key);
    const std::string slot = key.substr(0, dot), name = key.substr(dot + 1);
    const auto param_it = index_of.find(name);
    NL_CHECK(param_it != index_of.end(), optimizer_, "state key '{}' names no parameter of this model",
             key);
    const size_t i = param_it->second;
    const Var& param = params[i].second;
    if (count_steps_ && slot == "step") {
      NL_CHECK(tensor.numel() == 1 && tensor.dtype() == DType::F64, optimizer_,
               "state '{}' should be a float64 scalar step count, got {}", key, tensor.describe());
      const double count = tensor.item();
      NL_CHECK(count >= 0 && count <= static_cast<double>(global_steps) && count == std::floor(count),
               optimizer_, "state '{}' counts {} steps, not a whole number in [0, {}] (the optimizer's)",
               key, count, global_steps);
      steps[i] = static_cast<int64_t>(count);
      continue;
    }
    size_t s = 0;
    while (s < slots_.size() && slots_[s] != slot) ++s;
    NL_CHECK(s < slots_.size(), optimizer_, "state key '{}' has slot '{}', which this optimizer lacks",
             key, slot);
    NL_CHECK(tensor.shape() == param.shape(), optimizer_, "state '{}' has shape {} but the parameter is {}",
             key, shape_str(tensor.shape()), shape_str(param.shape()));
    NL_CHECK(tensor.dtype() == param.dtype(), optimizer_, "state '{}' is {} but the parameter is {}", key,
             dtype_name(tensor.dtype()), dtype_name(param.dtype()));
    NL_CHECK(!buffers[s][i].defined(), optimizer_, "state '{}' is given twice", key);
    buffers[s][i] = tensor.to(param.value().device()).clone();
  }
  for (size_t i = 0; i < params.size(); ++i) {
    bool has_buffer = false;
    for (size_t s = 0; s < slots_.size(); ++s) has_buffer = has_buffer || buffers[s][i].defined();
    // A checkpoint without per-parameter counts: every parameter with state took every step.
    if (steps[i] < 0) steps[i] = has_buffer ? global_steps : 0;
  }
  buffers_ = std::move(buffers);
  steps_ = std::move(steps);
}

Tensor grad_for_update(const Var& param, const std::string& name, const char* optimizer) {
  const Tensor& grad = param.grad();
  if (!grad.defined()) return grad;
  NL_CHECK(grad.shape() == param.shape(), optimizer, "gradient of '{}' has shape {} but the parameter is {}",
           name, shape_str(grad.shape()), shape_str(param.shape()));
  NL_CHECK(grad.dtype() == param.dtype(), optimizer, "gradient of '{}' is {} but the parameter is {}",
           name, dtype_name(grad.dtype()), dtype_name(param.dtype()));
  NL_CHECK(grad.device() == param.value().device(), optimizer,
           "gradient of '{}' is on {} but the parameter is on {}", name, grad.device().str(),
           param.value().device().str());
  NL_CHECK(param.value().is_contiguous(), optimizer, "parameter '{}' must be contiguous to update in place",
           name);
  return grad.contiguous();
}

}  // namespace normlab
