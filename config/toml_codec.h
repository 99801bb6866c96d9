// The TOML codec of the config reader and writer: a TOML value into a field's type (with what is
// wrong when it does not fit), a field's value as TOML text, and TOML string literals. The key table
// (config/config_keys.cpp) and the reader (config/config.cpp) use it; neither includes the other's
// internals for it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include <toml++/toml.h>

#include "core/device.h"
#include "core/named_enum.h"

namespace normlab {

// A TOML basic string literal, with quotes and escapes: "a \"b\"\n" (config files, overrides).
std::string toml_quote(const std::string& text);

// "string \"fast\"", "integer 3", "float 1.5", "boolean true", "an array", "a table", ...
std::string describe_node(const toml::node& node);

// A TOML value as the field's type, or nullopt with `error` saying what it is instead
// ("expected a float, got string \"fast\""). The pointer only selects the type.
std::optional<double> convert(const toml::node& node, double*, std::string& error);
std::optional<uint64_t> convert(const toml::node& node, uint64_t*, std::string& error);
std::optional<int> convert(const toml::node& node, int*, std::string& error);
std::optional<bool> convert(const toml::node& node, bool*, std::string& error);
std::optional<std::string> convert(const toml::node& node, std::string*, std::string& error);

// A field's value as TOML text that reads back to the same value: 0.001, 3, true, "post".
std::string toml_text(double v);
std::string toml_text(int64_t v);
std::string toml_text(int v);
std::string toml_text(bool v);
std::string toml_text(const std::string& v);
std::string toml_text(const Device& v);
std::string toml_text(uint64_t v);  // throws "[config] ..." past 2^63 - 1 (TOML integers are signed)
template <typename E> requires std::is_enum_v<E> std::string toml_text(E v) { return toml_quote(enum_name(v)); }

}  // namespace normlab
