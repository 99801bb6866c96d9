// The extension module normlab._normlab; `import normlab` re-exports it (python/normlab/).
#include "bindings/bindings.h"

namespace normlab::python {

namespace {

// normlab.Error: every C++ error ("[op] message naming shapes"), raised with the same message. It
// derives from both ValueError and RuntimeError (as NumPy's AxisError derives from ValueError and
// IndexError), so `except ValueError` and `except RuntimeError` both catch it.
void register_errors(nb::module_& m) {
  nb::object bases = nb::make_tuple(nb::handle(PyExc_ValueError), nb::handle(PyExc_RuntimeError));
  PyObject* error = PyErr_NewExceptionWithDoc(
      "normlab.Error",
      "A normlab error: the C++ message, which starts with the op's name in brackets "
      "(\"[matmul] inner dimensions differ ...\"). Both a ValueError and a RuntimeError.",
      bases.ptr(), nullptr);
  if (!error) throw nb::python_error();
  m.attr("Error") = nb::steal(error);
  nb::register_exception_translator(
      [](const std::exception_ptr& p, void* payload) {
        try {
          std::rethrow_exception(p);
        } catch (const OutOfMemory& e) {
          PyErr_SetString(PyExc_MemoryError, e.what());
        } catch (const Error& e) {
          PyErr_SetString(static_cast<PyObject*>(payload), e.what());
        }
      },
      error);
}

}  // namespace

}  // namespace normlab::python

NB_MODULE(_normlab, m) {
  using namespace normlab::python;
  m.doc() = "normlab's C++ engine: tensors, the tape, the differentiable ops (normlab.ops), the op registry's "
            "gradient checks, load_config and train. Import the package `normlab`, which re-exports this module.";
  register_errors(m);
  bind_tensor(m);
  bind_autograd(m);
  nb::module_ ops = m.def_submodule("ops", "The differentiable ops of autograd/ops.h, on Vars.");
  bind_ops(ops);
  bind_gradcheck(m);
  bind_runs(m);
  bind_norms(m);
  bind_placements(m);
}
