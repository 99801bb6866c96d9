#include "autograd/anomaly.h"

#include <cmath>

#include "core/ops.h"

namespace normlab {

namespace {
thread_local int64_t g_checks = 0;

// Integer tensors (ids) cannot hold inf/NaN.
bool is_finite(const Tensor& t) {
  ++g_checks;
  return !is_floating(t.dtype()) || ops::all_finite(t);
}

AnomalyTensor describe(const Tensor& t, std::string name) {
  AnomalyTensor d{std::move(name), t.dtype(), t.shape()};
  d.finite = !is_floating(t.dtype()) || ops::all_finite(t);
  if (d.finite) return d;
  for (const double v : t.to_vector()) {  // only on the way to an error
    d.inf_count += std::isinf(v) ? 1 : 0;
    d.nan_count += std::isnan(v) ? 1 : 0;
  }
  return d;
}

AnomalyRecord record_of(const char* phase, const char* op, const char* scope, const std::vector<Var>& inputs) {
  AnomalyRecord r{phase, op, scope};
  for (const Var& in : inputs) {
    if (!in.defined()) continue;
    if (in.is_leaf() && !in.name().empty()) r.parameters.push_back(in.name());
    r.inputs.push_back(describe(in.value(), in.name()));
  }
  return r;
}
}  // namespace

int64_t anomaly_checks() { return g_checks; }

std::string AnomalyTensor::str() const {
  std::string s = name.empty() ? "" : name + " ";
  s += fmt::format("{} {} ", dtype_name(dtype), shape_str(shape));
  if (finite) return s + "finite";
  return s + fmt::format("with {} inf and {} NaN", inf_count, nan_count);
}

std::string AnomalyRecord::message() const {
  std::string where = scope.empty() ? "outside any layer" : "in " + scope;
  if (!parameters.empty()) where += fmt::format(" (parameters {})", fmt::join(parameters, ", "));
  std::string what;
  if (phase == "forward") what = fmt::format("its output {}", output.str());
  else if (gradient_of < 0) what = fmt::format("the gradient arriving at its output {}", gradient.str());
  else what = fmt::format("the gradient it computed for input {}: {}", gradient_of, gradient.str());
  std::vector<std::string> ins;
  for (size_t i = 0; i < inputs.size(); ++i) ins.push_back(fmt::format("{}: {}", i, inputs[i].str()));
  std::string text = fmt::format("[anomaly] {}: op '{}' {} is the first to produce inf/NaN: {}; inputs {}", phase,
                                 op, where, what, fmt::join(ins, ", "));
  return phase == "forward" ? text : text + "; its output " + output.str();
}

void check_forward_output(const char* op, const std::vector<Var>& inputs, const Tensor& output) {
  if (is_finite(output)) return;
  AnomalyRecord r = record_of("forward", op, current_scope(), inputs);
  r.output = describe(output, "");
  throw AnomalyError(std::move(r));
}

void check_backward_output_grad(const Node& node, const Tensor& d_output) {
  if (is_finite(d_output)) return;
  AnomalyRecord r = record_of("backward", node.op, node.scope, node.inputs);
  r.output = describe(node.output.value(), "");
  r.gradient = describe(d_output, "d_output");
  throw AnomalyError(std::move(r));
}

void check_backward_grads(const Node& node, const std::vector<Tensor>& grads) {
  for (size_t k = 0; k < grads.size() && k < node.inputs.size(); ++k) {
    if (!node.inputs[k].requires_grad() || !grads[k].defined() || is_finite(grads[k])) continue;
    AnomalyRecord r = record_of("backward", node.op, node.scope, node.inputs);
    r.output = describe(node.output.value(), "");
    r.gradient_of = static_cast<int>(k);
    r.gradient = describe(grads[k], fmt::format("d_input{}", k));
    throw AnomalyError(std::move(r));
  }
}

}  // namespace normlab
