// How config/config_keys.cpp registers a key (internal to the config library): readers that
// convert and validate a TOML value, validators that also say in words what they accept (for
// `normlab config --explain` and docs/config.md), and Section<S>, whose .key(...) calls append one
// KeySpec per field with its type, allowed values and one-line description.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include <fmt/format.h>

#include "config/config_keys.h"
#include "config/suggest.h"
#include "config/toml_codec.h"
#include "core/error.h"
#include "core/named_enum.h"

namespace normlab::config_detail {

// --- integer keys: an integer, or a float with an integral value (1e5), within [low, high] ---
struct IntRange {
  int64_t low;
  int64_t high = std::numeric_limits<int64_t>::max();
};
// The largest count of steps (and of anything counted in steps): 2^53, exact as a double.
inline constexpr int64_t kMaxCount = int64_t{1} << 53;

// "" when fine, else the problem after the key name (": expected an integer, got float 1.5",
// " must be an integer <= 9007199254740992, got float 1e+30", " must be >= 1, got 0").
inline std::string read_integer(const toml::node& node, IntRange range, int64_t& out) {
  if (auto v = node.as_integer()) {
    out = v->get();
    if (out < range.low) return fmt::format(" must be >= {}, got {}", range.low, out);
    if (out > range.high) return fmt::format(" must be <= {}, got {}", range.high, out);
    return "";
  }
  auto f = node.as_floating_point();
  if (!f || !std::isfinite(f->get()) || f->get() != std::floor(f->get()))
    return ": expected an integer, got " + describe_node(node);
  // Compared as doubles; both bounds are exact doubles or round to the nearest one, as 2^63 - 1 does.
  if (f->get() < static_cast<double>(range.low))
    return fmt::format(" must be an integer >= {}, got {}", range.low, describe_node(node));
  if (f->get() > static_cast<double>(range.high) || f->get() >= 0x1p63)
    return fmt::format(" must be an integer <= {}, got {}", range.high, describe_node(node));
  out = static_cast<int64_t>(f->get());
  return "";
}

// What an IntRange accepts, in words: ">= 1", "0 to 2^53".
inline std::string range_text(IntRange range) {
  if (range.high == std::numeric_limits<int64_t>::max()) return fmt::format(">= {}", range.low);
  const std::string high = range.high == kMaxCount ? "2^53" : fmt::format("{}", range.high);
  return fmt::format("{} to {}", range.low, high);
}

// --- validators: test() is "" when fine, else the problem ("must be > 0, got -1"); allowed is
// what it accepts, in words ("> 0") ---
template <typename T> struct Check {
  std::function<std::string(const T&)> test;
  std::string allowed;
};

template <typename T> Check<T> greater_than(T low) {
  return {[low](const T& v) { return v > low ? "" : fmt::format("must be > {}, got {}", low, v); },
          fmt::format("> {}", low)};
}
template <typename T> Check<T> at_least(T low) {
  return {[low](const T& v) { return v >= low ? "" : fmt::format("must be >= {}, got {}", low, v); },
          fmt::format(">= {}", low)};
}
inline Check<double> in_zero_one(bool open_low) {  // [0, 1) or (0, 1)
  const std::string interval = open_low ? "(0, 1)" : "[0, 1)";
  return {[open_low, interval](const double& v) {
            const bool ok = (open_low ? v > 0 : v >= 0) && v < 1;
            return ok ? "" : fmt::format("must be in {}, got {}", interval, v);
          },
          interval};
}
inline Check<std::string> one_of(std::vector<std::string> names) {
  return {[names](const std::string& v) -> std::string {
            for (const auto& n : names)
              if (n == v) return "";
            return fmt::format("must be one of {}; got '{}'{}", fmt::join(names, ", "), v, did_you_mean(v, names));
          },
          fmt::format("one of {}", fmt::join(names, ", "))};
}
inline Check<std::string> not_empty() {
  return {[](const std::string& v) { return v.empty() ? "must not be empty" : ""; }, "not empty"};
}
inline Check<std::string> directory_name() {
  return {[](const std::string& v) -> std::string {
            if (v.empty() || v == "." || v == ".." || v.find('/') != std::string::npos)
              return fmt::format("must be a plain directory name (not empty, no '/'), got '{}'", v);
            return "";
          },
          "a plain directory name (no '/')"};
}

// A string naming one of the enum's values (EnumNames<E>, the only list of them), or the problem
// (" must be one of post, pre, ...; got 'psot' (did you mean 'post'?)").
template <typename E> std::string read_enum(const toml::node& node, E& out) {
  std::string error;
  const std::optional<std::string> text = convert(node, static_cast<std::string*>(nullptr), error);
  if (!text) return ": " + error;
  if (const std::optional<E> value = parse_enum<E>(*text)) {
    out = *value;
    return "";
  }
  const std::vector<std::string> names = enum_names<E>();
  return fmt::format(" must be one of {}; got '{}'{}", fmt::join(names, ", "), *text, did_you_mean(*text, names));
}
inline std::string read_device(const toml::node& node, Device& out) {
  std::string error;
  const std::optional<std::string> v = convert(node, static_cast<std::string*>(nullptr), error);
  if (!v) return ": " + error;
  try {
    out = parse_device(*v);  // the one list of device names
  } catch (const Error&) {
    return fmt::format(" must be cpu, cuda or cuda:N; got '{}'", *v);
  }
  return "";
}

// The TOML type of a field, in words.
template <typename T> std::string type_name() {
  if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_same_v<T, double>) return "float";
  else if constexpr (std::is_integral_v<T>) return "integer";
  else return "string";
}

// Appends one KeySpec per .key(...) call for the fields of section struct S. Every key has a
// one-line description: what it means, its unit, what 0 or "" means.
template <typename S> struct Section {
  std::vector<KeySpec>& out;
  std::string name;
  S RunConfig::*member;

  // Reads a node into a field's type: "" or the problem, which follows the key name (": expected
  // a float, got ...", " must be > 0, got -1").
  template <typename T> using Reader = std::function<std::string(const toml::node&, T&)>;

  template <typename T>
    requires(!std::is_enum_v<T>)
  Section& key(const std::string& key, T S::*field, Check<T> check, const std::string& description) {
    // Seeds: TOML integers are signed 64-bit.
    const std::string allowed = std::is_same_v<T, uint64_t> && check.allowed.empty() ? "0 to 2^63 - 1" : check.allowed;
    return add<T>(key, field, allowed, description, [check](const toml::node& node, T& value) -> std::string {
      std::string error;
      std::optional<T> converted = convert(node, static_cast<T*>(nullptr), error);
      if (!converted) return ": " + error;
      const std::string problem = check.test ? check.test(*converted) : "";
      if (!problem.empty()) return " " + problem;
      value = *converted;
      return "";
    });
  }
  template <typename T>
    requires(!std::is_enum_v<T>)
  Section& key(const std::string& key, T S::*field, const std::string& description) {
    return this->key(key, field, Check<T>{}, description);
  }
  template <typename E>
    requires std::is_enum_v<E>
  Section& key(const std::string& key, E S::*field, const std::string& description) {
    return add<E>(key, field, fmt::format("one of {}", fmt::join(enum_names<E>(), ", ")), description, read_enum<E>);
  }
  Section& key(const std::string& key, Device S::*field, const std::string& description) {
    return add<Device>(key, field, "one of cpu, cuda, cuda:N", description, read_device);
  }
  Section& key(const std::string& key, int64_t S::*field, IntRange range, const std::string& description) {
    return add<int64_t>(key, field, range_text(range), description,
                        [range](const toml::node& node, int64_t& value) { return read_integer(node, range, value); });
  }
  // The last key was added after runs were fingerprinted: its default value reads as absent in the
  // fingerprint (KeySpec::reads_as_absent), as a zero-like one does.
  Section& default_reads_as_absent() {
    out.back().reads_as_absent = out.back().get(RunConfig{});
    return *this;
  }

 private:
  template <typename T>
  Section& add(const std::string& key, T S::*field, const std::string& allowed, const std::string& description,
               Reader<T> read) {
    KeySpec spec;
    spec.section = name;
    spec.name = key;
    spec.is_string = std::is_same_v<T, std::string> || std::is_same_v<T, Device> || std::is_enum_v<T>;
    spec.type = type_name<T>();
    spec.allowed = allowed;
    spec.description = description;
    auto member_ = member;
    spec.set = [member_, field, key, read](RunConfig& config, const toml::node& node) -> std::string {
      T value{};
      const std::string problem = read(node, value);
      if (!problem.empty()) return key + problem;
      (config.*member_).*field = value;
      return "";
    };
    spec.get = [member_, field](const RunConfig& config) { return toml_text((config.*member_).*field); };
    out.push_back(std::move(spec));
    return *this;
  }
};

}  // namespace normlab::config_detail
