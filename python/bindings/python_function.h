// A Python function held by a row of a C++ table (a norm's forward, a placement's wiring): rows
// live until the process ends, but their Python objects must be let go while the interpreter still
// runs. normlab's atexit hook calls release_python_functions(), after which calling one throws.
// A call may come from any thread (training releases the GIL): it takes the GIL, and a Python
// exception becomes a normlab Error naming where it was raised, the Python state left clean.
#pragma once
#include <memory>
#include <string>
#include <utility>

#include "bindings/bindings.h"
#include "core/error.h"

namespace normlab::python {

// "ZeroDivisionError: planted (new_norm.py:12 in my_norm)": the exception and where it was raised
// (the innermost frame), not the whole traceback through the trainer.
std::string describe(const nb::python_error& e);

struct PythonRef {
  PyObject* fn = nullptr;
};
// Registers a reference to `fn` that release_python_functions() will clear.
std::shared_ptr<PythonRef> hold_python_function(nb::handle fn);
void release_python_functions();

// fn(args...) under the GIL. `op` names the caller in errors ("norm 'py_dyt'"); `what` the
// function ("forward"). Throws "[op] its Python what was released at interpreter exit" after the
// release, "[op] what raised <describe>" when the call raises.
template <typename... Args>
nb::object call_python(const PythonRef& ref, const std::string& op, const char* what, Args&&... args) {
  nb::gil_scoped_acquire gil;
  NL_CHECK(ref.fn != nullptr, op, "its Python {} was released at interpreter exit", what);
  try {
    return nb::handle(ref.fn)(std::forward<Args>(args)...);
  } catch (const nb::python_error& e) {  // fetched: nothing is left pending; freed here, under the GIL
    const std::string message = describe(e);
    fail(op, "{} raised {}", what, message);
  }
}

}  // namespace normlab::python
