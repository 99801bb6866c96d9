// The C++ op registry's gradient checks (autograd/gradcheck.h), as `normlab gradcheck --op NAME`
// runs them: each registered case builds its own float64 inputs and tolerance. The Python wrapper
// normlab.gradcheck_op (python/normlab/gradcheck.py) raises AssertionError when one fails.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

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
        for (const InputCheck& r : gradcheck(found->fn, inputs, found->input_names, found->differentiable, options)) {
          nb::dict row;
          row["input"] = r.input;
          row["elements"] = r.elements;
          row["max_abs_error"] = r.max_abs_error;
          row["max_rel_error"] = r.max_rel_error;
          row["tolerance"] = options.tolerance;
          row["passed"] = r.passed;
          rows.append(row);
        }
        return rows;
      },
      "name"_a, "seed"_a = 0, "shape"_a = std::vector<int64_t>{},
      "Runs the registered gradient check `name` (float64 central differences against backward, the case's own "
      "tolerance on the relative error) and returns one dict per checked input: input, elements, "
      "max_abs_error, max_rel_error, tolerance, passed. Clears this thread's tape first.");
}

}  // namespace normlab::python
