#include "config/toml_codec.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"

namespace normlab {

std::string toml_quote(const std::string& text) {
  std::string out = "\"";
  for (unsigned char ch : text) {
    if (ch == '"') out += "\\\"";
    else if (ch == '\\') out += "\\\\";
    else if (ch == '\n') out += "\\n";
    else if (ch == '\t') out += "\\t";
    else if (ch < 0x20 || ch == 0x7f) out += fmt::format("\\u{:04X}", ch);
    else out += static_cast<char>(ch);
  }
  return out + "\"";
}

std::string describe_node(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return "string " + toml_quote(node.as_string()->get());
    case toml::node_type::integer: return fmt::format("integer {}", node.as_integer()->get());
    case toml::node_type::floating_point:
      return fmt::format("float {}", node.as_floating_point()->get());
    case toml::node_type::boolean: return node.as_boolean()->get() ? "boolean true" : "boolean false";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date/time";
  }
}

// --- conversion of a TOML value into a field's type ---
std::optional<double> convert(const toml::node& node, double*, std::string& error) {
  if (auto v = node.as_floating_point(); v && std::isfinite(v->get())) return v->get();
  if (auto v = node.as_integer()) return static_cast<double>(v->get());
  error = (node.is_floating_point() ? "expected a finite float, got " : "expected a float, got ") + describe_node(node);
  return std::nullopt;
}
std::optional<uint64_t> convert(const toml::node& node, uint64_t*, std::string& error) {
  if (auto v = node.as_integer(); v && v->get() >= 0) return static_cast<uint64_t>(v->get());
  error = "expected a non-negative integer, got " + describe_node(node);
  return std::nullopt;
}
std::optional<int> convert(const toml::node& node, int*, std::string& error) {
  auto v = node.as_integer();
  if (v && v->get() >= std::numeric_limits<int>::min() && v->get() <= std::numeric_limits<int>::max())
    return static_cast<int>(v->get());
  error = "expected a 32-bit integer, got " + describe_node(node);
  return std::nullopt;
}
std::optional<bool> convert(const toml::node& node, bool*, std::string& error) {
  if (auto v = node.as_boolean()) return v->get();
  error = "expected a boolean (true/false), got " + describe_node(node);
  return std::nullopt;
}
std::optional<std::string> convert(const toml::node& node, std::string*, std::string& error) {
  if (auto v = node.as_string()) return v->get();
  error = "expected a string, got " + describe_node(node);
  return std::nullopt;
}

// --- writing a field as TOML text ---
std::string toml_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string text = fmt::format("{}", v);  // shortest text that reads back to the same double
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}
std::string toml_text(int64_t v) { return fmt::format("{}", v); }
std::string toml_text(int v) { return fmt::format("{}", v); }
std::string toml_text(bool v) { return v ? "true" : "false"; }
std::string toml_text(const std::string& v) { return toml_quote(v); }
std::string toml_text(const Device& v) { return toml_quote(v.str()); }
std::string toml_text(uint64_t v) {
  NL_CHECK(v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), "config",
           "{} does not fit a TOML integer (seeds must be < 2^63)", v);
  return fmt::format("{}", v);
}

}  // namespace normlab
