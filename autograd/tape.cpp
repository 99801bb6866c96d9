#include "autograd/tape.h"

#include <mutex>
#include <unordered_set>

#include "autograd/anomaly.h"
#include "core/ops.h"

namespace normlab {

Var::Var(Tensor value, bool requires_grad, std::string name) : impl_(std::make_shared<VarImpl>()) {
  impl_->value = std::move(value);
  impl_->requires_grad = requires_grad;
  impl_->name = std::move(name);
}

void Var::accumulate_grad(Tensor g) {
  if (!g.defined()) return;
  if (g.shape() != impl_->value.shape())
    fail("backward", "gradient of shape {} does not match {} '{}'", shape_str(g.shape()),
         shape_str(impl_->value.shape()), impl_->name);
  if (!impl_->grad.defined()) {
    // Own the buffer: g may alias a tensor saved elsewhere (then it is copied), or be a fresh
    // result that only this call holds (then it is adopted).
    const bool sole_owner = g.owns_storage_alone() && g.is_contiguous() && g.offset() == 0;
    impl_->grad = sole_owner ? std::move(g) : g.clone();
  } else {
    ops::axpy_(1.0, g, impl_->grad);
  }
}

Tape& Tape::current() {
  thread_local Tape tape;
  return tape;
}

namespace {
thread_local bool g_grad_enabled = true;
thread_local const char* g_scope = "";
thread_local bool g_anomaly_mode = false;  // here, beside record(): off costs one branch per op
}

bool anomaly_mode_enabled() { return g_anomaly_mode; }
AnomalyModeGuard::AnomalyModeGuard(bool enabled) : previous_(g_anomaly_mode) { g_anomaly_mode = enabled; }
AnomalyModeGuard::~AnomalyModeGuard() { g_anomaly_mode = previous_; }

// Interned once per name and never freed: Nodes keep the pointer past the module's lifetime.
const char* intern_scope(const std::string& name) {
  static std::mutex mutex;
  static std::unordered_set<std::string> names;  // node-based: elements never move
  const std::lock_guard<std::mutex> lock(mutex);
  return names.insert(name).first->c_str();
}
const char* current_scope() { return g_scope; }
ScopeGuard::ScopeGuard(const char* scope) : previous_(g_scope) { g_scope = scope; }
ScopeGuard::~ScopeGuard() { g_scope = previous_; }

bool grad_enabled() { return g_grad_enabled; }
NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) { g_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { g_grad_enabled = previous_; }

Var record(const char* op, std::vector<Var> inputs, Tensor output, BackwardFn backward) {
  if (g_anomaly_mode) check_forward_output(op, inputs, output);
  bool needs = false;
  if (g_grad_enabled)
    for (const Var& v : inputs) needs |= v.requires_grad();
  if (!needs) return Var(std::move(output), false);
  Var out(std::move(output), true);
  out.get()->is_leaf = false;
  Tape::current().push(Node{op, g_scope, std::move(inputs), out, std::move(backward)});
  return out;
}

void backward(const Var& loss) {
  NL_CHECK(loss.defined(), "backward", "loss is undefined");
  NL_CHECK(loss.value().numel() == 1, "backward",
           "loss must be a scalar, got shape {} (pass a seed gradient for non-scalar outputs)",
           shape_str(loss.shape()));
  backward(loss, Tensor::ones(loss.shape(), loss.dtype(), loss.value().device()));
}

void backward(const Var& output, const Tensor& seed) {
  NL_CHECK(output.requires_grad(), "backward",
           "output does not require grad (no input required grad, or it was computed under NoGradGuard)");
  std::vector<Node> nodes = std::move(Tape::current().nodes());
  Tape::current().clear();
  output.get()->grad = Tensor();
  const_cast<Var&>(output).accumulate_grad(seed);
  for (size_t i = nodes.size(); i-- > 0;) {
    Node& node = nodes[i];
    Tensor d_out = std::move(node.output.grad());
    node.output.zero_grad();  // intermediate gradient: freed once used
    if (d_out.defined()) {
      if (!node.backward)
        fail(node.op, "has no backward; it cannot be differentiated (recorded at tape position {})", i);
      const bool check = g_anomaly_mode;
      if (check) check_backward_output_grad(node, d_out);
      Grads grads = node.backward(d_out);
      NL_CHECK(grads.size() == node.inputs.size(), node.op,
               "backward returned {} gradients for {} inputs", grads.size(), node.inputs.size());
      if (check) check_backward_grads(node, grads);
      for (size_t k = 0; k < grads.size(); ++k) {
        Var& in = node.inputs[k];
        if (!in.requires_grad() || !grads[k].defined()) continue;
        if (grads[k].shape() != in.shape())
          fail(node.op, "backward produced gradient {} for input {} of shape {}",
               shape_str(grads[k].shape()), k, shape_str(in.shape()));
        in.accumulate_grad(std::move(grads[k]));
      }
    }
    node = Node{};  // free saved tensors and references now
  }
  if (!output.is_leaf()) const_cast<Var&>(output).zero_grad();
}

}  // namespace normlab
