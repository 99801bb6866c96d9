// Enums whose values have names in config files: one table per enum, the only list of its names.
// Parsing, error messages, suggestions and the documentation all read that table:
//
//   enum class Fruit { Apple, Pear };
//   template <> struct EnumNames<Fruit> {
//     static constexpr std::array<NamedValue<Fruit>, 2> values{{{Fruit::Apple, "apple"}, {Fruit::Pear, "pear"}}};
//   };
//   enum_name(Fruit::Pear) == "pear";  parse_enum<Fruit>("apple") == Fruit::Apple;  enum_names<Fruit>()
//
// An enum whose names are only known at run time (rows of a table that grows: NormType) declares
//   static std::vector<NamedValue<E>> runtime_values();
// in its EnumNames instead of `values`.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"

namespace normlab {

template <typename E> struct NamedValue {
  E value;
  std::string_view name;
};

template <typename E> struct EnumNames;  // specialised next to each enum

template <typename E>
concept NamedEnum = std::is_enum_v<E> && (requires { EnumNames<E>::values; } || requires { EnumNames<E>::runtime_values(); });

// Every (value, name) pair of the enum.
template <NamedEnum E> auto named_values() {
  if constexpr (requires { EnumNames<E>::values; }) {
    return EnumNames<E>::values;
  } else {
    return EnumNames<E>::runtime_values();
  }
}

template <typename E> std::string enum_name(E value) {
  for (const NamedValue<E>& v : named_values<E>())
    if (v.value == value) return std::string(v.name);
  return "<invalid " + std::to_string(static_cast<int>(value)) + ">";
}

template <typename E> std::optional<E> parse_enum(std::string_view name) {
  for (const NamedValue<E>& v : named_values<E>())
    if (v.name == name) return v.value;
  return std::nullopt;
}

template <typename E> std::vector<std::string> enum_names() {
  std::vector<std::string> names;
  for (const NamedValue<E>& v : named_values<E>()) names.emplace_back(v.name);
  return names;
}

// parse_enum for names written in code (a suite's labels, a converter's table): throws
// "[op] 'x' is not one of a, b, c" instead of returning nullopt.
template <typename E> E enum_value(std::string_view name, const char* op) {
  if (const std::optional<E> value = parse_enum<E>(name)) return *value;
  fail(op, "'{}' is not one of {}", name, fmt::join(enum_names<E>(), ", "));
}

}  // namespace normlab

// fmt::format("{}", NormType::RmsNorm) == "rmsnorm"
template <normlab::NamedEnum E> struct fmt::formatter<E> : fmt::formatter<std::string_view> {
  template <typename Context> auto format(E value, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(normlab::enum_name(value), ctx);
  }
};
