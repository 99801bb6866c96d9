#include "autograd/gradcheck.h"

#include <algorithm>
#include <cmath>

#include "autograd/ops.h"
#include "core/random.h"

namespace normlab {

namespace {

// L = sum(f(x) * w) in float64, with no tape recording.
double weighted_loss(const GradFn& f, const std::vector<Tensor>& inputs, const Tensor& w) {
  NoGradGuard guard;
  std::vector<Var> vars;
  for (const Tensor& t : inputs) vars.push_back(constant(t));
  const std::vector<double> y = f(vars).value().to_vector();
  const std::vector<double> wv = w.to_vector();
  double s = 0.0;
  for (size_t i = 0; i < y.size(); ++i) s += y[i] * wv[i];
  return s;
}

}  // namespace

GradFn on_device(GradFn f, Device device) {
  return [f = std::move(f), device](const std::vector<Var>& inputs) {
    std::vector<Var> moved;
    for (const Var& x : inputs) moved.push_back(x.value().defined() ? to_device(x, device) : x);
    return to_device(f(moved), Device::cpu());
  };
}

namespace {

// Central differences of L = sum(f(x) * w) over every entry of inputs[idx], against `analytic`.
InputCheck check_input(const GradFn& f, const std::vector<Tensor>& inputs, int idx, const Tensor& analytic,
                       const Tensor& w, const GradcheckOptions& opt) {
  InputCheck r;
  const std::vector<double> a = analytic.to_vector();
  std::vector<Tensor> perturbed = inputs;
  perturbed[idx] = inputs[idx].clone();
  r.elements = inputs[idx].numel();
  double* p = perturbed[idx].data<double>();
  for (int64_t i = 0; i < r.elements; ++i) {
    const double orig = p[i];
    p[i] = orig + opt.step;
    const double up = weighted_loss(f, perturbed, w);
    p[i] = orig - opt.step;
    const double down = weighted_loss(f, perturbed, w);
    p[i] = orig;
    const double numeric = (up - down) / (2.0 * opt.step);
    const double abs_err = std::abs(numeric - a[i]);
    const double denom = std::max({std::abs(numeric), std::abs(a[i]), opt.floor});
    // A NaN error (an inf or NaN loss or gradient) counts as infinite: std::max(e, NaN) is e.
    const double rel_err = std::isnan(abs_err / denom) ? INFINITY : abs_err / denom;
    if (r.worst < 0 || rel_err > r.max_rel_error) {
      r.worst = i;
      r.worst_analytic = a[i];
      r.worst_numeric = numeric;
    }
    r.max_abs_error = std::isnan(abs_err) ? INFINITY : std::max(r.max_abs_error, abs_err);
    r.max_rel_error = std::max(r.max_rel_error, rel_err);
  }
  r.passed = r.max_rel_error <= opt.tolerance && std::isfinite(r.max_rel_error);
  return r;
}

}  // namespace

std::vector<InputCheck> gradcheck(const GradFn& f, const std::vector<Tensor>& inputs,
                                  const std::vector<std::string>& names,
                                  const std::vector<int>& differentiable,
                                  const GradcheckOptions& opt) {
  for (const Tensor& t : inputs)
    NL_CHECK(!t.defined() || t.dtype() != DType::F32, "gradcheck",
             "inputs must be float64 (finite differences in float32 are too noisy), got {}",
             t.describe());
  // Analytic gradients: one backward of L = sum(f(x) * w).
  Tape::current().clear();
  std::vector<Var> vars;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool wants = std::find(differentiable.begin(), differentiable.end(), static_cast<int>(i)) !=
                       differentiable.end();
    vars.push_back(Var(inputs[i].clone(), wants, i < names.size() ? names[i] : ""));
  }
  Var y = f(vars);
  // A scalar output is checked as it is (w = 1); others against fixed random weights.
  Generator gen(opt.seed ^ 0x5eedull);
  Tensor w = y.shape().empty() ? Tensor::full({}, 1.0, DType::F64) : Tensor::randn(y.shape(), gen, 0.0, 1.0, DType::F64);
  Var loss = sum_all(mul(y, constant(w)));
  backward(loss);

  std::vector<InputCheck> results;
  for (int idx : differentiable) {
    const Tensor analytic = vars[idx].grad().defined() ? vars[idx].grad()
                                                       : Tensor::zeros(inputs[idx].shape(), DType::F64);
    InputCheck r = check_input(f, inputs, idx, analytic, w, opt);
    r.input = idx < static_cast<int>(names.size()) ? names[idx] : std::to_string(idx);
    results.push_back(r);
  }
  return results;
}

const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> cases = [] {
    std::vector<OpCase> c;
    register_elementwise_cases(c);
    register_shape_cases(c);
    register_index_cases(c);
    register_product_cases(c);
    register_softmax_loss_cases(c);
    register_norm_cases(c);
    return c;
  }();
  return cases;
}

const OpCase* find_op_case(const std::string& name) {
  for (const OpCase& c : op_cases())
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace normlab
