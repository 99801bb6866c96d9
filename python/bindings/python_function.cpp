#include "bindings/python_function.h"

#include <fmt/format.h>

#include <vector>

namespace normlab::python {

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

namespace {
std::vector<std::shared_ptr<PythonRef>>& python_refs() {
  static std::vector<std::shared_ptr<PythonRef>> refs;  // guarded by the GIL
  return refs;
}
}  // namespace

std::shared_ptr<PythonRef> hold_python_function(nb::handle fn) {
  auto ref = std::make_shared<PythonRef>();
  ref->fn = fn.inc_ref().ptr();
  python_refs().push_back(ref);
  return ref;
}

void release_python_functions() {
  for (const std::shared_ptr<PythonRef>& ref : python_refs()) Py_CLEAR(ref->fn);
  python_refs().clear();
}

}  // namespace normlab::python
