// The table of config keys behind config/config.h (internal to the config reader/writer).
// Each key is one KeySpec: section, name, its description, and how to read (convert + validate)
// and write it. The keys are registered in config_keys.cpp (with config/key_builder.h), the
// cross-key checks in cross_checks.cpp.
// Checks that involve several keys (d_model % n_heads, context <= context_length, ...) are
// CrossChecks, run after the whole configuration has been read.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "config/run_config.h"

namespace normlab::config_detail {

struct KeySpec {
  std::string section;  // "model", "optim", ...
  std::string name;     // "norm_placement", ...
  bool is_string = false;
  std::string type;         // "integer", "float", "bool", "string"
  std::string allowed;      // what the validator accepts, in words: ">= 1", "(0, 1)", "post, pre, ..."
  std::string description;  // one line: meaning, unit, what 0 or "" means (docs/config.md is made of these)
  // Converts and validates `value` and stores it; returns "" or what is wrong, starting with the
  // key name: "lr: expected a float, got string \"fast\"", "lr must be > 0, got -1".
  std::function<std::string(RunConfig&, const toml::node& value)> set;
  // The field's current value as TOML text: 0.001, "post", true.
  std::function<std::string(const RunConfig&)> get;
  // A key added after runs were fingerprinted whose default is not zero-like ("decoder", 0.15):
  // this value (the default's TOML text) reads as an absent key in config_fingerprint_text, so
  // earlier runs keep their fingerprints. "" = none (only zero-like values read as absent).
  std::string reads_as_absent;
};

struct CrossCheck {
  std::string section;            // the section named in the message
  std::vector<std::string> keys;  // "model.d_model", ...: reported where the last of them was set
  std::function<std::string(const RunConfig&)> check;  // "" or the problem
};

const std::vector<std::string>& section_names();  // in file order
const std::vector<KeySpec>& key_specs();          // in file order
const std::vector<CrossCheck>& cross_checks();

}  // namespace normlab::config_detail
