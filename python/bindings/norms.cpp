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
#include "core/error.h"
#include "nn/norm_kinds.h"

namespace normlab::python {

using namespace nb::literals;

namespace {

// "ZeroDivisionError: planted (new_norm.py:12 in my_norm)": the exception and where it was raised
// (the innermost frame), not the whole traceback through the trainer.
std::string describe(const nb::python_error& e) {
  std::string text = std::string(nb::str(e.type().attr("__name__")).c_str()) + ": " + nb::str(e.value()).c_str();
  nb::object tb = nb::borrow(e.traceback());
  if (tb.is_none()) return text;
  while (!tb.attr("tb_next").is_none()) tb = tb.attr("tb_next");
  const nb::object code = tb.attr("tb_frame").attr("f_code");
  const std::string file = nb::str(code.attr("co_filename")).c_str();
  return fmt::format("{} ({}:{} in {})", text, file.substr(file.rfind('/') + 1),
                     nb::cast<int>(tb.attr("tb_lineno")), nb::str(code.attr("co_name")).c_str());
}

// The Python functions of the registered rows. Rows live until the process ends, but the Python
// objects must be let go while the interpreter still runs: normlab's atexit hook calls
// release_python_norms(), after which such a row's forward throws.
struct PythonRef {
  PyObject* fn = nullptr;
};
std::vector<std::shared_ptr<PythonRef>>& python_refs() {
  static std::vector<std::shared_ptr<PythonRef>> refs;  // guarded by the GIL
  return refs;
}

void release_python_norms() {
  for (const std::shared_ptr<PythonRef>& ref : python_refs()) {
    Py_CLEAR(ref->fn);
  }
  python_refs().clear();
}

// A registered row's forward: runs on whichever thread trains (the GIL released there) and takes
// the GIL for the call. A Python exception becomes "[norm 'NAME'] forward raised ..." and the
// Python state is left clean.
class PythonForward {
 public:
  PythonForward(std::string name, nb::handle fn) : name_(std::move(name)), ref_(std::make_shared<PythonRef>()) {
    ref_->fn = fn.inc_ref().ptr();
    python_refs().push_back(ref_);
  }

  Var operator()(const Var& x, const NormCall& call) const {
    nb::gil_scoped_acquire gil;
    NL_CHECK(ref_->fn != nullptr, "norm '" + name_ + "'", "its Python forward was released at interpreter exit");
    try {
      nb::dict p;
      for (const auto& [param, value] : call.params)
        if (value.defined()) p[param.c_str()] = value;
      p["eps"] = call.eps;
      nb::object y = nb::handle(ref_->fn)(x, p);
      Var* out = nullptr;
      if (!nb::try_cast<Var*>(y, out) || out == nullptr)
        fail("norm '" + name_ + "'", "forward must return a normlab.Var, got {}", nb::type_name(y.type()).c_str());
      NL_CHECK(out->shape() == x.shape(), "norm '" + name_ + "'", "forward changed the shape: x {} -> {}",
               shape_str(x.shape()), shape_str(out->shape()));
      return *out;
    } catch (const nb::python_error& e) {  // fetched: nothing is left pending; freed here, under the GIL
      const std::string message = describe(e);
      fail("norm '" + name_ + "'", "forward raised {}", message);
    }
  }

 private:
  std::string name_;
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
      "norm_names",
      [] {
        std::vector<std::string> names;
        for (const NormKind* k : norm_kinds())
          if (find_norm_kind(k->name) == k->type) names.push_back(k->name);
        return names;
      },
      "The values model.norm_type takes now: the built-in norms, then those registered in this process.");
  m.def("_release_python_norms", &release_python_norms,
        "Lets go of the registered norms' Python functions (normlab's atexit hook; their rows then refuse to run).");
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
