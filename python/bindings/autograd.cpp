// normlab.Var and the tape (autograd/var.h, autograd/tape.h), as in C++: a Var holds a Tensor
// value, a gradient once backward() reaches it, and whether it requires one. Every op on Vars that
// require grad is recorded on the thread's tape; backward() replays it in reverse and clears it.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>

#include <memory>

#include "autograd/ops.h"
#include "bindings/bindings.h"

namespace normlab::python {

using namespace nb::literals;

namespace {

// `with normlab.no_grad():` holds a NoGradGuard from __enter__ to __exit__.
struct NoGrad {
  std::unique_ptr<NoGradGuard> guard;
};

Var var_from(const Tensor& value, bool requires_grad, std::string name) {
  NL_CHECK(!requires_grad || is_floating(value.dtype()), "Var", "only floating tensors can require grad, got {}",
           value.describe());
  return Var(value, requires_grad, std::move(name));
}

}  // namespace

void bind_autograd(nb::module_& m) {
  nb::class_<Var>(m, "Var",
                  "A tensor that takes part in automatic differentiation (autograd/var.h).\n\n"
                  "Var(value, requires_grad=False, name='') wraps a Tensor or a NumPy array (viewed "
                  "without a copy where Tensor would view it). Ops on Vars that require grad are "
                  "recorded on the tape; backward() fills .grad of the leaves that require grad. "
                  "Gradients accumulate across backward() calls until zero_grad(); a Var used twice "
                  "gets the sum of both gradients; the tape is empty after backward().")
      .def(nb::init_implicit<Tensor>(), "value"_a, "A constant Var (no gradient) over a tensor.")
      .def("__init__",
           [](Var* self, const Tensor& value, bool requires_grad, std::string name) {
             new (self) Var(var_from(value, requires_grad, std::move(name)));
           },
           "value"_a, "requires_grad"_a, "name"_a = "",
           "A Var over a tensor; a leaf that requires grad when requires_grad is True.")
      .def("__init__",
           [](Var* self, const HostArray& array) { new (self) Var(tensor_from_array(array, false)); },
           "array"_a, nb::is_implicit(), "A constant Var over a host array (viewed where Tensor would view it).")
      .def("__init__",
           [](Var* self, const HostArray& array, bool requires_grad, std::string name) {
             new (self) Var(var_from(tensor_from_array(array, false), requires_grad, std::move(name)));
           },
           "array"_a, "requires_grad"_a, "name"_a = "",
           "A Var over a host array; a leaf that requires grad when requires_grad is True.")
      .def_prop_ro("value", [](const Var& v) { return v.value(); }, "The value, a Tensor (shares memory).")
      .def_prop_ro(
          "grad", [](const Var& v) -> std::optional<Tensor> {
            if (!v.grad().defined()) return std::nullopt;
            return v.grad();
          },
          "The accumulated gradient, a Tensor (shares memory), or None before any backward() reached it.")
      .def_prop_ro("requires_grad", &Var::requires_grad, "Whether backward() computes a gradient for it.")
      .def_prop_ro("is_leaf", &Var::is_leaf, "True unless an op recorded on the tape made it.")
      .def_prop_rw("name", [](const Var& v) { return v.name(); }, [](Var& v, std::string n) { v.set_name(std::move(n)); },
                   "A name for messages (parameters: 'blocks.3.ffn.w2.weight').")
      .def_prop_ro("shape", [](const Var& v) -> nb::object { return nb::cast(v.value()).attr("shape"); }, "The value's shape.")
      .def_prop_ro("dtype", [](const Var& v) { return std::string(dtype_name(v.dtype())); }, "The value's dtype name.")
      .def_prop_ro("ndim", &Var::dim, "The number of axes.")
      .def("numpy", [](const Var& v) { return tensor_to_numpy(v.value()); }, "The value as a NumPy array (no copy).")
      .def("item", &Var::item, "The single element of the value, as a float.")
      .def("zero_grad", &Var::zero_grad, "Forgets the gradient (.grad becomes None).")
      .def(
          "backward",
          [](const Var& v, std::optional<Tensor> seed) {
            if (seed) backward(v, *seed);
            else backward(v);
          },
          "seed"_a = nb::none(),
          "Reverse-mode sweep from this Var: d(self) = 1 for a scalar, else `seed` (a Tensor or array "
          "of self's shape). Accumulates into the leaves' .grad, frees intermediates, clears the tape.")
      .def("detach", [](const Var& v) { return constant(v.value()); }, "A constant Var over the same value (no gradient).")
      .def("__repr__", [](const Var& v) {
            std::string r = "Var(" + nb::cast<std::string>(nb::repr(nb::cast(v.value())));
            if (v.requires_grad()) r += ", requires_grad=True";
            if (!v.name().empty()) r += ", name='" + v.name() + "'";
            return r + ")";
          })
      // Arithmetic as in NumPy (broadcasting); a Python number on either side uses scale/add_scalar.
      .def("__add__", [](const Var& a, const Var& b) { return add(a, b); }, nb::is_operator())
      .def("__add__", [](const Var& a, double b) { return add_scalar(a, b); }, nb::is_operator())
      .def("__radd__", [](const Var& a, double b) { return add_scalar(a, b); }, nb::is_operator())
      .def("__sub__", [](const Var& a, const Var& b) { return sub(a, b); }, nb::is_operator())
      .def("__sub__", [](const Var& a, double b) { return add_scalar(a, -b); }, nb::is_operator())
      .def("__rsub__", [](const Var& a, double b) { return add_scalar(neg(a), b); }, nb::is_operator())
      .def("__mul__", [](const Var& a, const Var& b) { return mul(a, b); }, nb::is_operator())
      .def("__mul__", [](const Var& a, double b) { return scale(a, b); }, nb::is_operator())
      .def("__rmul__", [](const Var& a, double b) { return scale(a, b); }, nb::is_operator())
      .def("__truediv__", [](const Var& a, const Var& b) { return div(a, b); }, nb::is_operator())
      .def("__truediv__", [](const Var& a, double b) { return scale(a, 1.0 / b); }, nb::is_operator())
      .def("__neg__", [](const Var& a) { return neg(a); }, nb::is_operator())
      .def("__matmul__", [](const Var& a, const Var& b) { return matmul(a, b); }, nb::is_operator());
  nb::implicitly_convertible<HostArray, Var>();

  m.def("parameter", [](const Tensor& value, std::string name) { return var_from(value, true, std::move(name)); },
        "value"_a, "name"_a = "", "A trainable leaf: Var(value, requires_grad=True, name=name).");
  m.def("constant", [](const Tensor& value) { return constant(value); }, "value"_a,
        "A constant input: Var(value), no gradient.");
  m.def(
      "backward",
      [](const Var& v, std::optional<Tensor> seed) {
        if (seed) backward(v, *seed);
        else backward(v);
      },
      "output"_a, "seed"_a = nb::none(), "backward(output, seed=None): as output.backward(seed).");
  m.def("grad_enabled", &grad_enabled, "Whether ops are recorded now (False inside `with no_grad():`).");
  m.def("tape_size", [] { return Tape::current().size(); },
        "The number of ops recorded on this thread's tape and not yet consumed by backward().");
  m.def("clear_tape", [] { Tape::current().clear(); },
        "Drops every recorded op without a backward (a forward pass whose gradient is not wanted).");

  nb::class_<NoGrad>(m, "no_grad",
                     "Context manager: nothing is recorded on the tape inside `with normlab.no_grad():` "
                     "(evaluation, updates, initialisation), as C++'s NoGradGuard.")
      .def(nb::init<>())
      .def("__enter__", [](NoGrad& g) { g.guard = std::make_unique<NoGradGuard>(); return &g; },
           nb::rv_policy::reference, "Stops recording.")
      .def("__exit__", [](NoGrad& g, nb::args) { g.guard.reset(); }, "Restores recording as it was.");
}

}  // namespace normlab::python
