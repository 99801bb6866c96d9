// TableReader: reads the keys of one TOML table of a registration file, each once, with errors that
// start with "[registration]" and name the file, the line and the key; check_no_other_keys makes a
// misspelt key an error, not a silent default. Used by xiong/registration.cpp (v4) and
// xiong/v5/registration_v5.cpp.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "core/error.h"

namespace normlab::xiong {

inline constexpr const char* kRegistrationOp = "registration";

// The registration file at `path` parsed; a syntax error names the file and the line.
inline toml::table parse_registration_file(const std::string& path) {
  try {
    return toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    fail(kRegistrationOp, "{} line {}: {}", path, e.source().begin.line, e.description());
  }
}

// Reads the keys of one table, each once, and checks at the end that the table had no others.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string path, std::string where)
      : table_(table), path_(std::move(path)), where_(std::move(where)) {}

  std::string text(const char* key, bool required = true) {
    const toml::node* node = get(key, required);
    if (!node) return "";
    const auto* s = node->as_string();
    NL_CHECK(s, kRegistrationOp, "{} line {}: {}{} must be a string", path_, line(node), where_, key);
    return s->get();
  }
  double number(const char* key, bool required = true) {
    const toml::node* node = get(key, required);
    if (!node) return 0.0;
    const std::optional<double> v = node->value<double>();
    NL_CHECK(v.has_value(), kRegistrationOp, "{} line {}: {}{} must be a number", path_, line(node), where_, key);
    return *v;
  }
  int64_t integer(const char* key, bool required = true) {
    const toml::node* node = get(key, required);
    if (!node) return 0;
    const auto* i = node->as_integer();
    NL_CHECK(i, kRegistrationOp, "{} line {}: {}{} must be an integer", path_, line(node), where_, key);
    return i->get();
  }
  std::vector<std::string> texts(const char* key) {
    std::vector<std::string> out;
    for (const toml::node* item : array(key)) {
      const auto* s = item->as_string();
      NL_CHECK(s, kRegistrationOp, "{} line {}: {}{} must be an array of strings", path_, line(item), where_, key);
      out.push_back(s->get());
    }
    return out;
  }
  std::vector<int> integers(const char* key) {
    std::vector<int> out;
    for (const toml::node* item : array(key)) {
      const auto* i = item->as_integer();
      NL_CHECK(i, kRegistrationOp, "{} line {}: {}{} must be an array of integers", path_, line(item), where_, key);
      out.push_back(static_cast<int>(i->get()));
    }
    return out;
  }
  // Every key of the table was read: a misspelt key is an error, not a silent default.
  void check_no_other_keys() const {
    for (const auto& [key, node] : table_) {
      NL_CHECK(read_.count(std::string(key.str())), kRegistrationOp, "{} line {}: unknown key {}{}", path_, line(&node),
               where_, key.str());
    }
  }
  int line(const toml::node* node) const { return static_cast<int>(node->source().begin.line); }
  int table_line() const { return static_cast<int>(table_.source().begin.line); }

 private:
  const toml::node* get(const char* key, bool required) {
    read_.insert(key);
    const toml::node* node = table_.get(key);
    NL_CHECK(node || !required, kRegistrationOp, "{} line {}: {}{} is missing", path_, table_line(), where_, key);
    return node;
  }
  std::vector<const toml::node*> array(const char* key) {
    const toml::node* node = get(key, true);
    const auto* a = node->as_array();
    NL_CHECK(a, kRegistrationOp, "{} line {}: {}{} must be an array", path_, line(node), where_, key);
    std::vector<const toml::node*> out;
    for (const toml::node& item : *a) out.push_back(&item);
    return out;
  }

  const toml::table& table_;
  std::string path_, where_;
  std::set<std::string> read_;
};

}  // namespace normlab::xiong
