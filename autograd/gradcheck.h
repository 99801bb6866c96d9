// Gradient checking: central finite differences in float64 against the analytic backward.
//
// For a function f(inputs) -> Var, we reduce the output to a scalar with fixed random weights,
// L = sum(f(x) * w), so every output element's gradient is exercised (w = 1 for a scalar output).
// Then for each input element:
//   numeric  = (L(x + h e_i) - L(x - h e_i)) / (2h)
//   analytic = dL/dx_i from backward()
//   abs_err  = |numeric - analytic|,  rel_err = abs_err / max(|numeric|, |analytic|, floor)
// An input passes when max rel_err <= tolerance (the floor keeps near-zero gradients from dividing
// by ~0; their absolute error is then what counts).
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "autograd/var.h"

namespace normlab {

struct GradcheckOptions {
  double step = 1e-6;        // h
  double tolerance = 1e-6;   // on the relative error
  double floor = 1e-3;       // denominator floor of the relative error
  uint64_t seed = 0;         // for the output weights w
};

struct InputCheck {
  std::string input;  // name of the input ("x", "gamma", ...)
  int64_t elements = 0;
  double max_abs_error = 0, max_rel_error = 0;
  bool passed = false;
  // The entry with the largest relative error (its flat index; -1 for an empty input), with both
  // gradients there: what a failure report names.
  int64_t worst = -1;
  double worst_analytic = NAN, worst_numeric = NAN;
};

using GradFn = std::function<Var(const std::vector<Var>&)>;

// Checks d f / d input for every input listed in `differentiable` (indices into inputs).
std::vector<InputCheck> gradcheck(const GradFn& f, const std::vector<Tensor>& inputs,
                                  const std::vector<std::string>& names,
                                  const std::vector<int>& differentiable,
                                  const GradcheckOptions& options);

// f run on `device`: its inputs copied there and its output copied back (to_device both ways),
// so that gradcheck's finite differences and backward exercise that device's kernels in float64.
GradFn on_device(GradFn f, Device device);

// ---- the op registry: drives `normlab gradcheck`, the gradcheck tests, and (later) CPU-vs-CUDA ----
struct OpCase {
  std::string name;         // "layer_norm", "rms_norm_unit_offset", "matmul_tn", ...
  std::string description;  // one line
  std::vector<std::string> input_names;
  std::vector<int> differentiable;  // which inputs get gradients checked
  // Builds float64 inputs from a seed and an optional shape hint (empty = the case's default).
  std::function<std::vector<Tensor>(uint64_t seed, const Shape& shape)> make_inputs;
  GradFn fn;
  GradcheckOptions options;
};

// Every registered case, in a stable order. The families register in their own files through
// the functions below (explicit calls, so that static-library linking cannot drop a family).
const std::vector<OpCase>& op_cases();
const OpCase* find_op_case(const std::string& name);
void register_elementwise_cases(std::vector<OpCase>& cases);
void register_shape_cases(std::vector<OpCase>& cases);
void register_index_cases(std::vector<OpCase>& cases);
void register_product_cases(std::vector<OpCase>& cases);
void register_softmax_loss_cases(std::vector<OpCase>& cases);
void register_norm_cases(std::vector<OpCase>& cases);

}  // namespace normlab
