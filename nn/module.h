// Module: a tree of named parameters and children, as in PyTorch. Parameter names are dotted paths:
// "blocks.3.ffn.w2.weight", "blocks.3.norm1.weight", "final_norm.weight", "tok_emb.weight".
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/tape.h"

namespace normlab {

class Module {
 public:
  virtual ~Module() = default;

  // Every parameter of this module and its children, depth-first in registration order.
  std::vector<std::pair<std::string, Var>> named_parameters() const;
  std::vector<Var> parameters() const;
  // Non-trainable state saved in checkpoints (BatchNorm running statistics), by dotted name.
  // The tensors share storage with the module's: restore a checkpoint with copy_().
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;
  int64_t parameter_count() const;

  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  void zero_grad();

  // Functional call: substitutes `params` (in named_parameters() order, same shapes and dtypes)
  // for this module's parameters; forward() then computes with them and gradients flow into them.
  // Used by gradient checks, which feed every parameter as an input. Layers therefore read their
  // parameters through parameter_slot() at forward time rather than caching copies.
  void replace_parameters(const std::vector<Var>& params);

  // Moves every parameter (value and gradient) and buffer of this module and its children to
  // `device`, in place: Var handles held elsewhere see the moved tensors. Build the optimizer
  // after moving (its state is created on the parameters' device).
  void to(Device device);

  // Names this module's scope and its children's by their dotted paths under `prefix` (a model
  // calls it once, when it is built); forward() holds scope() while it runs (autograd/tape.h's
  // ScopeGuard), so anomaly mode can say which layer an op belongs to. "" until named.
  void name_scopes(const std::string& prefix);
  const char* scope() const { return scope_; }

  // Edits the role (autograd/param_role.h) of every parameter of this module and its children: the
  // modules that place a child declare where it sits (an attention's output projection, a block's
  // layer, a model's head). Var handles share the role, so every holder sees the edit.
  void edit_roles(const std::function<void(ParamRole&)>& edit);

 protected:
  // The returned reference is valid until the next registration: keep a copy (Var is a handle).
  // `role` declares what the parameter is (its kind, and a norm parameter's initial value).
  Var& register_parameter(const std::string& name, Var param, const ParamRole& role = {});
  Tensor& register_buffer(const std::string& name, Tensor buffer);
  // This module's own parameter `name` as currently registered, or an undefined Var when absent.
  Var parameter_slot(const std::string& name) const;
  // This module's own buffer `name` as currently held (moved by to()), or undefined when absent.
  Tensor buffer_slot(const std::string& name) const;
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    children_.emplace_back(name, module);
    return module;
  }

 private:
  void collect(const std::string& prefix, std::vector<std::pair<std::string, Var>>& out) const;
  void replace_from(const std::vector<Var>& params, size_t& next);
  void collect_buffers(const std::string& prefix,
                       std::vector<std::pair<std::string, Tensor>>& out) const;
  std::vector<std::pair<std::string, Var>> params_;
  std::vector<std::pair<std::string, Tensor*>> buffers_;
  std::vector<std::unique_ptr<Tensor>> buffer_storage_;  // owns the buffers (stable addresses)
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
  const char* scope_ = "";  // interned (intern_scope)
};

}  // namespace normlab
