// A setting read once from an environment variable whose value must name one of an enum's values
// (NORMLAB_HALF_GEMM, NORMLAB_F32_GEMM).
#pragma once
#include <cstdlib>
#include <initializer_list>
#include <string>

#include "core/error.h"

namespace normlab {

// The value of `var` among `values` (each named by name_of), the first of them when `var` is
// unset; any other text throws "[gemm] VAR must be auto, onednn or fallback, got 'x'".
template <typename E, typename NameOf>
E choice_from_environment(const char* var, std::initializer_list<E> values, NameOf name_of) {
  const char* value = std::getenv(var);
  const std::string text = value ? value : std::string(name_of(*values.begin()));
  std::string names;
  size_t i = 0;
  for (const E v : values) {
    if (text == name_of(v)) return v;
    names += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + std::string(name_of(v));
    ++i;
  }
  fail("gemm", "{} must be {}, got '{}'", var, names, text);
}

}  // namespace normlab
