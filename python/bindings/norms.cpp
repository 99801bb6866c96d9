// Norms defined in Python: a row of the norm table (nn/norm_kinds.h) whose forward is a Python
// function of Vars. normlab.register_norm (python/normlab/norms.py) checks the parameter spec and
// calls _register_norm here. From then on, in this process, model.norm_type = NAME builds it in
// every placement, and training, gradient checks, the memory estimate and the per-layer logs read
// its row as they read a built-in one.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "bindings/bindings.h"
#include "bindings/python_function.h"
#include "core/error.h"
#include "core/named_enum.h"
#include "nn/norm_kinds.h"

namespace normlab::python {

using namespace nb::literals;

namespace {

// A registered row's forward: runs on whichever thread trains (the GIL released there) and takes
// the GIL for the call. A Python exception becomes "[norm 'NAME'] forward raised ..." and the
// Python state is left clean.
class PythonForward {
 public:
  PythonForward(std::string name, nb::handle fn) : op_("norm '" + std::move(name) + "'"), ref_(hold_python_function(fn)) {}

  Var operator()(const Var& x, const NormCall& call) const {
    nb::gil_scoped_acquire gil;
    nb::dict p;
    for (const auto& [param, value] : call.params)
      if (value.defined()) p[param.c_str()] = value;
    p["eps"] = call.eps;
    nb::object y = call_python(*ref_, op_, "forward", x, p);
    Var* out = nullptr;
    if (!nb::try_cast<Var*>(y, out) || out == nullptr)
      fail(op_, "forward must return a normlab.Var, got {}", nb::type_name(y.type()).c_str());
    NL_CHECK(out->shape() == x.shape(), op_, "forward changed the shape: x {} -> {}", shape_str(x.shape()),
             shape_str(out->shape()));
    return *out;
  }

 private:
  std::string op_;
  std::shared_ptr<PythonRef> ref_;
};

using ParamSpec = std::tuple<std::string, bool, bool, double>;  // name, per_channel, needs_bias, initial

int register_python_norm(const std::string& name, const std::vector<ParamSpec>& params, nb::callable forward,
                         const std::string& formula, double kept_tensors) {
  NormKind kind;
  kind.name = name;
  kind.formula = formula.empty() ? "defined in Python" : formula;
  for (const auto& [param, per_channel, needs_bias, initial] : params)
    kind.params.push_back({.name = param, .per_channel = per_channel, .needs_bias = needs_bias, .initial = initial});
  kind.kept_tensors = kept_tensors;
  kind.composed = PythonForward(name, forward);
  return static_cast<int>(register_norm_kind(std::move(kind)));
}

}  // namespace

void bind_norms(nb::module_& m) {
  m.def("_register_norm", &register_python_norm, "name"_a, "params"_a, "forward"_a, "formula"_a = "",
        "kept_tensors"_a = 4.0,
        "Adds a row to the norm table (use normlab.register_norm, which checks the spec): params are (name, "
        "per_channel, needs_bias, initial) tuples. Returns the row's type id.");
  m.def(
      "norm_names", [] { return enum_names<NormType>(); },
      "The values model.norm_type takes now: the built-in norms, then those registered in this process.");
  m.def("_release_python_functions", &release_python_functions,
        "Lets go of the Python functions of registered norms and placements (normlab's atexit hook; their rows then "
        "refuse to run).");
  m.def(
      "builtin_norm_names",
      [] {
        std::vector<std::string> names;
        for (const NormKind* k : norm_kinds())
          if (k->type <= NormType::None) names.push_back(k->name);
        return names;
      },
      "The norms built into the C++ engine (those a `normlab` child process knows).");
  m.def(
      "norm_formula",
      [](const std::string& name) {
        const std::optional<NormType> type = find_norm_kind(name);
        if (!type) fail("norm", "no norm named '{}'", name);
        return norm_kind(*type).formula;
      },
      "name"_a, "The one-line formula of a norm's row (built in or registered).");
}

}  // namespace normlab::python
