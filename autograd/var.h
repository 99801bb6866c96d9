// Var: a tensor that takes part in automatic differentiation.
//
// The tape rule, stated once:
//  * Parameters (leaves with requires_grad) ACCUMULATE gradients across backward() calls until
//    zero_grad(). Every use of a Var contributes: a tensor used twice (the residual stream, a tied
//    embedding) receives the SUM of both gradients.
//  * Intermediate Vars' gradients and every node's saved tensors are freed once backward() has
//    used them; the tape is empty afterwards.
#pragma once
#include <memory>
#include <string>

#include "autograd/param_role.h"
#include "core/tensor.h"

namespace normlab {

struct VarImpl {
  Tensor value;
  Tensor grad;  // undefined until a gradient arrives
  bool requires_grad = false;
  bool is_leaf = true;
  std::string name;  // parameters: "blocks.3.ffn.w2.weight"
  ParamRole role;    // parameters: what the registering modules declared (autograd/param_role.h)
};

class Var {
 public:
  Var() = default;
  explicit Var(Tensor value, bool requires_grad = false, std::string name = {});
  explicit Var(std::shared_ptr<VarImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  const Tensor& value() const { return impl_->value; }
  Tensor& value() { return impl_->value; }
  const Tensor& grad() const { return impl_->grad; }
  Tensor& grad() { return impl_->grad; }
  bool requires_grad() const { return impl_ && impl_->requires_grad; }
  bool is_leaf() const { return impl_->is_leaf; }
  const std::string& name() const { return impl_->name; }
  void set_name(std::string name) { impl_->name = std::move(name); }
  const ParamRole& role() const { return impl_->role; }
  void set_role(const ParamRole& role) { impl_->role = role; }
  void zero_grad() { impl_->grad = Tensor(); }
  // Adds g into grad (allocating on first use): the accumulation rule. A g whose storage nobody
  // else holds is adopted without a copy.
  void accumulate_grad(Tensor g);

  const Shape& shape() const { return impl_->value.shape(); }
  int dim() const { return impl_->value.dim(); }
  int64_t size(int axis) const { return impl_->value.size(axis); }
  DType dtype() const { return impl_->value.dtype(); }
  double item() const { return impl_->value.item(); }

  VarImpl* get() const { return impl_.get(); }
  const std::shared_ptr<VarImpl>& impl() const { return impl_; }

 private:
  std::shared_ptr<VarImpl> impl_;
};

// A trainable leaf: requires_grad = true.
inline Var parameter(Tensor value, std::string name = {}) {
  return Var(std::move(value), true, std::move(name));
}
// A constant input (no gradient).
inline Var constant(Tensor value) { return Var(std::move(value), false); }

}  // namespace normlab
