// Module: parameters, buffers and children in registration order; names are dotted paths.
#include "nn/module.h"

namespace normlab {

namespace {
std::string join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}
}  // namespace

void Module::collect(const std::string& prefix,
                     std::vector<std::pair<std::string, Var>>& out) const {
  for (const auto& [name, param] : params_) out.emplace_back(join(prefix, name), param);
  for (const auto& [name, child] : children_) child->collect(join(prefix, name), out);
}

void Module::collect_buffers(const std::string& prefix,
                             std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& [name, buffer] : buffers_) out.emplace_back(join(prefix, name), *buffer);
  for (const auto& [name, child] : children_) child->collect_buffers(join(prefix, name), out);
}

std::vector<std::pair<std::string, Var>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Var>> out;
  collect("", out);
  return out;
}

std::vector<Var> Module::parameters() const {
  std::vector<Var> out;
  for (auto& [name, param] : named_parameters()) out.push_back(param);
  return out;
}

// The returned tensors share storage with the module's buffers: copy_ into them to restore state.
std::vector<std::pair<std::string, Tensor>> Module::named_buffers() const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect_buffers("", out);
  return out;
}

int64_t Module::parameter_count() const {
  int64_t n = 0;
  for (const Var& p : parameters()) n += p.value().numel();
  return n;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

void Module::name_scopes(const std::string& prefix) {
  scope_ = intern_scope(prefix);
  for (auto& [name, child] : children_) child->name_scopes(join(prefix, name));
}

void Module::edit_roles(const std::function<void(ParamRole&)>& edit) {
  for (auto& [name, param] : named_parameters()) {
    ParamRole role = param.role();
    edit(role);
    param.set_role(role);
  }
}

void Module::zero_grad() {
  for (Var& p : parameters()) p.zero_grad();
}

Var& Module::register_parameter(const std::string& name, Var param, const ParamRole& role) {
  NL_CHECK(param.defined(), "module", "parameter '{}' is undefined", name);
  param.set_role(role);
  for (const auto& [existing, p] : params_)
    NL_CHECK(existing != name, "module", "parameter '{}' registered twice", name);
  params_.emplace_back(name, std::move(param));
  return params_.back().second;
}

Tensor& Module::register_buffer(const std::string& name, Tensor buffer) {
  for (const auto& [existing, b] : buffers_)
    NL_CHECK(existing != name, "module", "buffer '{}' registered twice", name);
  buffer_storage_.push_back(std::make_unique<Tensor>(std::move(buffer)));
  buffers_.emplace_back(name, buffer_storage_.back().get());
  return *buffer_storage_.back();
}

}  // namespace normlab

namespace normlab {

Var Module::parameter_slot(const std::string& name) const {
  for (const auto& [own, param] : params_)
    if (own == name) return param;
  return Var();
}

Tensor Module::buffer_slot(const std::string& name) const {
  for (const auto& [own, buffer] : buffers_)
    if (own == name) return *buffer;
  return Tensor();
}

void Module::to(Device device) {
  for (auto& [name, param] : params_) {
    VarImpl& impl = *param.get();
    impl.value = impl.value.to(device);
    if (impl.grad.defined()) impl.grad = impl.grad.to(device);
  }
  for (auto& [name, buffer] : buffers_) *buffer = buffer->to(device);
  for (auto& [name, child] : children_) child->to(device);
}

void Module::replace_from(const std::vector<Var>& params, size_t& next) {
  for (auto& [name, param] : params_) param = params[next++];
  for (auto& [name, child] : children_) child->replace_from(params, next);
}

// Validates everything first, so that a mismatch leaves the module unchanged.
void Module::replace_parameters(const std::vector<Var>& params) {
  const auto current = named_parameters();
  NL_CHECK(params.size() == current.size(), "module",
           "replace_parameters: expected {} parameters, got {}", current.size(), params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const Var& p = params[i];
    const Var& old = current[i].second;
    NL_CHECK(p.defined() && p.shape() == old.shape() && p.dtype() == old.dtype(), "module",
             "replace_parameters: '{}' expects {} {}, got {}", current[i].first,
             dtype_name(old.dtype()), shape_str(old.shape()),
             p.defined() ? p.value().describe() : std::string("undefined"));
  }
  size_t next = 0;
  replace_from(params, next);
}

}  // namespace normlab
