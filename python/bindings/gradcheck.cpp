// The C++ gradient checker (autograd/gradcheck.h), the one pass rule both languages use:
//   run_op_case    the op registry's cases, as `normlab gradcheck --op NAME` runs them (each case
//                  builds its own float64 inputs and tolerance): normlab.gradcheck_op;
//   _gradcheck     any Python function of Vars: normlab.gradcheck.
// The Python wrappers (python/normlab/gradcheck.py) raise AssertionError when a check fails.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <utility>

#include "autograd/gradcheck.h"
#include "bindings/bindings.h"
#include "nn/model_cases.h"

namespace normlab::python {

using namespace nb::literals;

namespace {

// The op registry plus the whole-model cases nn/ adds, as the command line lists them; built on
// each call, so that norms registered since (normlab.register_norm) have their cases.
std::vector<OpCase> all_cases() {
  std::vector<OpCase> cases = op_cases();
  register_model_cases(cases);
  return cases;
}

nb::dict check_row(const InputCheck& r, double tolerance) {
  nb::dict row;
  row["input"] = r.input;
  row["elements"] = r.elements;
  row["max_abs_error"] = r.max_abs_error;
  row["max_rel_error"] = r.max_rel_error;
  row["tolerance"] = tolerance;
  row["passed"] = r.passed;
  row["worst"] = r.worst;
  row["worst_analytic"] = r.worst_analytic;
  row["worst_numeric"] = r.worst_numeric;
  return row;
}

// fn(*vars) -> Var, called back under the GIL (held: gradcheck runs in the calling thread).
GradFn python_function(nb::callable fn) {
  return [fn](const std::vector<Var>& xs) {
    nb::list args;
    for (const Var& x : xs) args.append(nb::cast(x));
    nb::object y = fn(*args);
    Var* out = nullptr;
    if (!nb::try_cast<Var*>(y, out) || out == nullptr)
      fail("gradcheck", "fn must return a normlab.Var, got {}", nb::type_name(y.type()).c_str());
    return *out;
  };
}

nb::list gradcheck_python(nb::callable fn, const std::vector<HostArray>& arrays, double step, double tolerance,
                          double floor, uint64_t seed) {
  std::vector<Tensor> inputs;
  std::vector<std::string> names;
  std::vector<int> all;
  for (size_t i = 0; i < arrays.size(); ++i) {
    inputs.push_back(tensor_from_array(arrays[i], /*copy=*/true));
    names.push_back(std::to_string(i));
    all.push_back(static_cast<int>(i));
  }
  const GradcheckOptions options{.step = step, .tolerance = tolerance, .floor = floor, .seed = seed};
  nb::list rows;
  for (const InputCheck& r : gradcheck(python_function(std::move(fn)), inputs, names, all, options))
    rows.append(check_row(r, tolerance));
  return rows;
}

}  // namespace

void bind_gradcheck(nb::module_& m) {
  m.def(
      "op_case_names",
      [] {
        std::vector<std::string> names;
        for (const OpCase& c : all_cases()) names.push_back(c.name);
        return names;
      },
      "The names of the registered gradient-check cases (`normlab gradcheck --list`).");
  m.def(
      "run_op_case",
      [](const std::string& name, uint64_t seed, const std::vector<int64_t>& shape) {
        const std::vector<OpCase> cases = all_cases();
        const OpCase* found = nullptr;
        for (const OpCase& c : cases)
          if (c.name == name) found = &c;
        if (!found)
          fail("gradcheck", "unknown op case '{}' ({} cases: normlab.op_case_names() lists them)", name, cases.size());
        GradcheckOptions options = found->options;
        options.seed = seed;
        const auto inputs = found->make_inputs(seed, Shape(shape.begin(), shape.end()));
        nb::list rows;
        for (const InputCheck& r : gradcheck(found->fn, inputs, found->input_names, found->differentiable, options))
          rows.append(check_row(r, options.tolerance));
        return rows;
      },
      "name"_a, "seed"_a = 0, "shape"_a = std::vector<int64_t>{},
      "Runs the registered gradient check `name` (float64 central differences against backward, the case's own "
      "tolerance on the relative error) and returns one dict per checked input: input, elements, "
      "max_abs_error, max_rel_error, tolerance, passed, worst (flat index), worst_analytic, worst_numeric. Clears "
      "this thread's tape first.");
  m.def("_gradcheck", &gradcheck_python, "fn"_a, "inputs"_a, "step"_a, "tolerance"_a, "floor"_a, "seed"_a,
        "The C++ checker on fn(*Vars) -> Var over float64 copies of `inputs`: one dict per input, as run_op_case's "
        "(use normlab.gradcheck).");
}

}  // namespace normlab::python
