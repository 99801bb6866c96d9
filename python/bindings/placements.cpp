// Placements defined in Python: a row of the placement table (nn/placement.h) whose wiring per
// layer, and optionally its shortcut and init scales, are Python functions. normlab.register_placement
// (python/normlab/placements.py) checks the arguments and calls _register_placement here. From then
// on, in this process, model.norm_placement = NAME builds it in both stacks, as a built-in row.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bindings/bindings.h"
#include "bindings/python_function.h"
#include "core/named_enum.h"
#include "nn/placement.h"

namespace normlab::python {

using namespace nb::literals;

namespace {

const char* stack_kind_name(Stack::Kind kind) {
  switch (kind) {
    case Stack::Kind::Single: return "single";
    case Stack::Kind::Encoder: return "encoder";
    case Stack::Kind::Decoder: return "decoder";
  }
  return "?";
}

// scale(kind, layers, other_layers) -> float, for the row's shortcut or init scale.
std::function<double(const Stack&)> python_scale(const std::string& op, nb::handle fn, const char* what) {
  if (fn.is_none()) return nullptr;
  std::shared_ptr<PythonRef> ref = hold_python_function(fn);
  return [op, ref, what](const Stack& s) {
    nb::gil_scoped_acquire gil;
    nb::object y = call_python(*ref, op, what, stack_kind_name(s.kind), s.layers, s.other_layers);
    double value = 0;
    if (!nb::try_cast<double>(y, value) || !std::isfinite(value) || value <= 0)
      fail(op, "{} must return a positive finite number, got {}", what, nb::str(y).c_str());
    return value;
  };
}

int register_python_placement(const std::string& name, const std::string& label, const std::string& formula,
                              nb::callable wiring, bool final_norm, bool bottom_to_top, nb::object shortcut_scale,
                              nb::object init_scale) {
  const std::string op = "placement '" + name + "'";
  PlacementKind kind;
  kind.name = name;
  kind.label = label.empty() ? name : label;
  kind.formula = formula.empty() ? "defined in Python" : formula;
  std::shared_ptr<PythonRef> ref = hold_python_function(wiring);
  kind.wiring = [op, ref](int64_t layer, int64_t layers) {
    nb::gil_scoped_acquire gil;
    nb::object y = call_python(*ref, op, "wiring", layer, layers);
    std::string text;
    if (!nb::try_cast<std::string>(y, text))
      fail(op, "wiring(layer, layers) must return a string, got {}", nb::type_name(y.type()).c_str());
    return enum_value<Wiring>(text, "register_placement");
  };
  kind.final_norm = final_norm;
  kind.bottom_to_top = bottom_to_top;
  kind.shortcut_scale = python_scale(op, shortcut_scale, "shortcut_scale");
  kind.init_scale = python_scale(op, init_scale, "init_scale");
  return static_cast<int>(register_placement_kind(std::move(kind)));
}

}  // namespace

void bind_placements(nb::module_& m) {
  m.def("_register_placement", &register_python_placement, "name"_a, "label"_a, "formula"_a, "wiring"_a,
        "final_norm"_a, "bottom_to_top"_a, "shortcut_scale"_a = nb::none(), "init_scale"_a = nb::none(),
        "Adds a row to the placement table (use normlab.register_placement, which checks the arguments). Returns "
        "the row's id.");
  m.def(
      "placement_names", [] { return enum_names<NormPlacement>(); },
      "The values model.norm_placement takes now: the built-in placements, then those registered in this process.");
}

}  // namespace normlab::python
