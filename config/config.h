// Reading and writing run configurations (config/run_config.h) as TOML.
//
//   preset = "gpt2"          # optional, top level: nn/presets.h fills [model] first
//   [model]                  # then every key given overrides the preset / the struct default
//   norm_placement = "post"
//   [optim]
//   lr = 3e-4                # integers are accepted where floats are expected
//
// Sections: [model] [optim] [schedule] [data] [train] [log]; each key has the name of its struct
// field (the table of keys is in config/config_keys.cpp: a new field is added there, once).
// Command-line overrides "section.key=value" (or "preset=name") are applied after the file; the
// value is read as a TOML value, and a bare word is taken as a string (model.norm_placement=post).
//
// Every problem throws normlab::Error before anything runs, naming where it came from:
//   configs/x.toml:12: [model] unknown key 'norm_placment' (did you mean 'norm_placement'?)
//   configs/x.toml:3: [optim] lr: expected a float, got string "fast"
//   override 'optim.lr=-1': [optim] lr must be > 0, got -1
//   configs/x.toml:4:9: TOML syntax error: ...
#pragma once
#include <string>
#include <vector>

#include "config/run_config.h"

namespace normlab {

// path "" reads no file (defaults, then overrides).
RunConfig load_config(const std::string& path, const std::vector<std::string>& overrides = {});

// The resolved configuration with every key written, so that load_config of the text gives back
// an equal RunConfig. Throws if a value cannot be written as TOML (a seed >= 2^63).
std::string config_to_toml(const RunConfig& config);

// What a run computes, as text: "section.key = value" for every key whose value is not zero-like
// (false, 0, 0.0, "", []), with train.name, train.out_dir, train.threads, log.tensorboard and
// train.detect_anomaly left out (where a run goes, how many threads it uses, whether it also writes
// its logs for TensorBoard or names the op that diverged, not what it computes). A zero-like value
// reads as an absent key, so a key added later with an "off" default leaves earlier runs'
// fingerprints as they were, while any other change of any value (a changed default too) shows.
// A key added later with another default (model.arch "decoder", data.mask_prob 0.15) is marked in
// config_keys.cpp so that its default reads as absent too (a later change of that default would not show).
std::string config_fingerprint_text(const RunConfig& config);

// A 16-hex-digit hash of config_fingerprint_text: equal configs give equal fingerprints. A run
// stores it in fingerprint.txt; a sweep compares it before reusing a point's results (long suites
// resume across sessions and code changes by it).
std::string config_fingerprint(const RunConfig& config);

// The "section.key" names of every config key, in file order (for help texts and tests).
std::vector<std::string> config_key_names();

// What one config key is, from the one table of keys (config/config_keys.cpp): `normlab config
// --explain` and docs/config.md (config/config_docs.h) print these.
struct ConfigKeyDoc {
  std::string section, name;   // "train", "checkpoint_every"
  std::string type;            // "integer", "float", "bool", "string"
  std::string allowed;         // ">= 1", "(0, 1)", "post, pre, none, sandwich, deepnorm"; "" = any value of the type
  std::string default_value;   // as TOML: 0, "pre", true
  std::string description;     // one line: meaning, unit, what 0 or "" means
  std::string presets;         // [model] keys a preset sets: "post: gpt1; pre: gpt2, llama, ..."; else ""
  std::string value_in(const RunConfig& config) const;  // the key's value in `config`, as TOML
};
std::vector<ConfigKeyDoc> config_key_docs();  // in file order

}  // namespace normlab
