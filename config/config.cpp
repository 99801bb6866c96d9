// Reads a RunConfig from TOML + overrides (the order: preset, file keys in file order, overrides in
// command-line order, then the checks that involve several keys) and writes it back as TOML.
// A key set explicitly wins over the preset; when it changes one of the preset's family keys
// (nn/presets.h preset_keys()), one line on stderr names the key, the new value and the preset's.
#include "config/config.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/error.h"
#include "core/files.h"
#include "config/config_keys.h"
#include "config/toml_codec.h"
#include "config/fingerprint.h"
#include "config/suggest.h"
#include "nn/presets.h"

namespace normlab {
namespace {

using config_detail::KeySpec;

[[noreturn]] void config_error(const std::string& where, const std::string& message) {
  throw Error(where + ": " + message);
}

const KeySpec* find_key(const std::string& section, const std::string& name) {
  for (const KeySpec& spec : config_detail::key_specs())
    if (spec.section == section && spec.name == name) return &spec;
  return nullptr;
}

bool is_section(const std::string& name) {
  const auto& names = config_detail::section_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

// "[model] unknown key 'norm_placment' (did you mean 'norm_placement'?)"; a key that exists in
// another section says where it belongs.
std::string unknown_key_message(const std::string& section, const std::string& name) {
  std::vector<std::string> in_section;
  std::string elsewhere;
  for (const KeySpec& spec : config_detail::key_specs()) {
    if (spec.section == section) in_section.push_back(spec.name);
    else if (spec.name == name && elsewhere.empty()) elsewhere = spec.section;
  }
  std::string hint = did_you_mean(name, in_section);
  if (hint.empty() && !elsewhere.empty()) hint = fmt::format(" (it belongs in [{}])", elsewhere);
  return fmt::format("[{}] unknown key '{}'{}", section, name, hint);
}

// "unknown section [modle] (did you mean [model]?)" / "unknown top-level key 'prest' (did you
// mean 'preset'?)".
std::string unknown_section_message(const std::string& name, bool is_table) {
  const std::string section = nearest_name(name, config_detail::section_names());
  if (is_table || !section.empty()) {
    return fmt::format("unknown section [{}]{}", name,
                       section.empty() ? "" : " (did you mean [" + section + "]?)");
  }
  return fmt::format("unknown top-level key '{}'{} (sections: [{}])", name,
                     did_you_mean(name, {"preset"}),
                     fmt::join(config_detail::section_names(), "] ["));
}

// One value to apply, from the file or from an override.
struct Assignment {
  std::string where;  // "configs/x.toml:12" or "override 'optim.lr=3e-4'"
  std::string section, name;
  const toml::node* value = nullptr;
};

// Parses "section.key=value" (or "preset=name"). A value that is not valid TOML is a bare string.
struct Override {
  std::string text, section, name;
  toml::table parsed;      // holds "v" when the value parsed as TOML
  toml::value<std::string> raw{std::string()};
};

Override parse_override(const std::string& text) {
  Override o;
  o.text = text;
  const std::string where = fmt::format("override '{}'", text);
  const size_t eq = text.find('=');
  if (eq == std::string::npos) config_error(where, "expected section.key=value");
  auto trim = [](std::string s) {
    const size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  const std::string path = trim(text.substr(0, eq)), value = trim(text.substr(eq + 1));
  if (path == "preset") {
    o.name = "preset";
  } else {
    const size_t dot = path.find('.');
    if (dot == std::string::npos) config_error(where, "expected section.key=value");
    o.section = path.substr(0, dot);
    o.name = path.substr(dot + 1);
    if (!is_section(o.section)) config_error(where, unknown_section_message(o.section, true));
    if (!find_key(o.section, o.name)) config_error(where, unknown_key_message(o.section, o.name));
  }
  o.raw = toml::value<std::string>(value);
  try {
    toml::table t = toml::parse("v = " + value);
    if (t.size() == 1 && t.contains("v")) o.parsed = std::move(t);
  } catch (const toml::parse_error&) {
    // not a TOML value: taken as a bare string
  }
  return o;
}

// The node to use for an override: the parsed TOML value, or the raw text for string keys and
// for values that are not valid TOML.
const toml::node* override_value(const Override& o, bool is_string) {
  const toml::node* parsed = o.parsed.get("v");
  if (!parsed || (is_string && !parsed->is_string())) return &o.raw;
  return parsed;
}

class ConfigReader {
 public:
  explicit ConfigReader(std::string path) : path_(std::move(path)) {}

  RunConfig read(const std::vector<std::string>& override_texts) {
    std::vector<Override> overrides;
    for (const std::string& text : override_texts) overrides.push_back(parse_override(text));
    toml::table file = path_.empty() ? toml::table() : parse_file();

    // 1. the preset: an override wins over the file
    std::string preset_where = path_.empty() ? "config" : path_;
    const toml::node* preset = nullptr;
    if (auto node = file.get("preset")) {
      preset = node;
      preset_where = at(node->source());
    }
    for (const Override& o : overrides) {
      if (o.name == "preset") {
        preset = override_value(o, true);
        preset_where = fmt::format("override '{}'", o.text);
      }
    }
    if (preset) apply_preset_node(*preset, preset_where);

    // 2. the file's keys, in file order
    std::vector<Assignment> assignments = file_assignments(file);
    // 3. overrides, in command-line order
    for (const Override& o : overrides) {
      if (o.name == "preset") continue;
      assignments.push_back({fmt::format("override '{}'", o.text), o.section, o.name,
                             override_value(o, find_key(o.section, o.name)->is_string)});
    }
    const RunConfig preset_values = config_;
    for (const Assignment& a : assignments) {
      const KeySpec& spec = *find_key(a.section, a.name);
      const std::string problem = spec.set(config_, *a.value);
      if (!problem.empty()) config_error(a.where, fmt::format("[{}] {}", a.section, problem));
      set_at_[a.section + "." + a.name] = {a.where, order_++};
      report_preset_override(spec, a.where, preset_values);
    }
    // 4. checks across keys, reported where the last key involved was set
    for (const auto& cross : config_detail::cross_checks()) {
      const std::string problem = cross.check(config_);
      if (problem.empty()) continue;
      std::string where = path_.empty() ? "config" : path_;
      int latest = -1;
      for (const std::string& key : cross.keys) {
        auto it = set_at_.find(key);
        if (it != set_at_.end() && it->second.second > latest) {
          latest = it->second.second;
          where = it->second.first;
        }
      }
      config_error(where, fmt::format("[{}] {}", cross.section, problem));
    }
    return config_;
  }

 private:
  std::string at(const toml::source_region& source) const {
    return fmt::format("{}:{}", path_, source.begin.line);
  }

  toml::table parse_file() {
    std::error_code error;
    const auto type = std::filesystem::status(path_, error).type();
    if (type == std::filesystem::file_type::directory)
      throw Error(fmt::format("{}: is a directory, not a config file", path_));
    if (type != std::filesystem::file_type::regular && type != std::filesystem::file_type::not_found &&
        type != std::filesystem::file_type::none)
      throw Error(fmt::format("{}: not a regular file (a config must be a TOML file)", path_));
    std::string text;
    try {
      text = read_whole_file(path_, "config");
    } catch (const Error&) {  // config errors name the file first, as the others do
      throw Error(fmt::format("{}: cannot open config file", path_));
    }
    try {
      return toml::parse(text, path_);
    } catch (const toml::parse_error& e) {
      throw Error(fmt::format("{}:{}:{}: TOML syntax error: {}", path_, e.source().begin.line,
                              e.source().begin.column, e.description()));
    }
  }

  void apply_preset_node(const toml::node& node, const std::string& where) {
    if (!node.is_string()) config_error(where, "preset: expected a string, got " +
                                                   describe_node(node));
    const std::string name = node.as_string()->get();
    config_.preset = name;
    if (name.empty()) return;
    const std::vector<std::string> names = preset_names();
    if (std::find(names.begin(), names.end(), name) == names.end())
      config_error(where, fmt::format("preset must be one of {}; got '{}'{}", fmt::join(names, ", "),
                                      name, did_you_mean(name, names)));
    config_.model = apply_preset(name, config_.model);
  }

  // A key of the preset's family set explicitly to another value wins over the preset; say so once
  // per key, on stderr: "configs/x.toml:10: model.norm_type = "layernorm" overrides preset 'llama'
  // (which sets "rmsnorm")".
  void report_preset_override(const KeySpec& spec, const std::string& where, const RunConfig& preset_values) {
    if (config_.preset.empty() || spec.section != "model") return;
    const auto& keys = preset_keys();
    if (std::find(keys.begin(), keys.end(), spec.name) == keys.end()) return;
    const std::string preset_value = spec.get(preset_values), value = spec.get(config_);
    const std::string key = "model." + spec.name;
    if (value == preset_value || reported_.count(key)) return;
    reported_.insert(key);
    fmt::print(stderr, "{}: {} = {} overrides preset '{}' (which sets {})\n", where, key, value, config_.preset,
               preset_value);
  }

  // Every key of the file's sections, checked against the key table, sorted by position.
  std::vector<Assignment> file_assignments(const toml::table& file) {
    struct Located {
      toml::source_position pos;
      Assignment assignment;
    };
    std::vector<Located> found;
    for (auto&& [key, node] : file) {
      const std::string name(key.str());
      if (name == "preset") continue;
      if (!is_section(name))
        config_error(at(key.source()), unknown_section_message(name, node.is_table()));
      const toml::table* section = node.as_table();
      if (!section)
        config_error(at(key.source()), fmt::format("'{}' must be a section [{}], got {}", name, name,
                                                   describe_node(node)));
      for (auto&& [sub_key, value] : *section) {
        const std::string sub_name(sub_key.str());
        if (!find_key(name, sub_name))
          config_error(at(sub_key.source()), unknown_key_message(name, sub_name));
        found.push_back({sub_key.source().begin, {at(sub_key.source()), name, sub_name, &value}});
      }
    }
    std::sort(found.begin(), found.end(), [](const Located& a, const Located& b) {
      return a.pos.line != b.pos.line ? a.pos.line < b.pos.line : a.pos.column < b.pos.column;
    });
    std::vector<Assignment> out;
    for (auto& l : found) out.push_back(std::move(l.assignment));
    return out;
  }

  std::string path_;
  RunConfig config_;
  std::map<std::string, std::pair<std::string, int>> set_at_;  // "model.d_model" -> (where, order)
  int order_ = 0;
  std::set<std::string> reported_;  // preset keys already reported as overridden
};

}  // namespace

RunConfig load_config(const std::string& path, const std::vector<std::string>& overrides) {
  return ConfigReader(path).read(overrides);
}

std::string config_to_toml(const RunConfig& config) {
  std::string out =
      "# normlab run configuration, fully resolved: every key is written, so the preset below\n"
      "# only documents where the [model] values came from.\n";
  out += "preset = " + toml_quote(config.preset) + "\n";
  std::string section;
  for (const KeySpec& spec : config_detail::key_specs()) {
    if (spec.section != section) {
      section = spec.section;
      out += "\n[" + section + "]\n";
    }
    out += spec.name + " = " + spec.get(config) + "\n";
  }
  return out;
}

namespace {

// A value that reads the same as an absent key: false, 0, 0.0, "" or [].
bool is_zero_like(const std::string& value) {
  return value == "false" || value == "0" || value == "0.0" || value == "\"\"" || value == "[]";
}

}  // namespace

std::string config_fingerprint_text(const RunConfig& config) {
  // Where a run goes and how it is watched (detect_anomaly only names the op that diverged).
  static const std::set<std::string> not_computed = {"train.name", "train.out_dir", "train.threads",
                                                     "log.tensorboard", "train.detect_anomaly"};
  std::string text = "preset = " + toml_quote(config.preset) + "\n";
  for (const KeySpec& spec : config_detail::key_specs()) {
    const std::string key = spec.section + "." + spec.name, value = spec.get(config);
    const bool absent = is_zero_like(value) || (!spec.reads_as_absent.empty() && value == spec.reads_as_absent);
    if (!not_computed.count(key) && !absent) text += key + " = " + value + "\n";
  }
  return text;
}

std::string config_fingerprint(const RunConfig& config) { return hex_fingerprint(config_fingerprint_text(config)); }

std::vector<std::string> config_key_names() {
  std::vector<std::string> names;
  for (const KeySpec& spec : config_detail::key_specs()) names.push_back(spec.section + "." + spec.name);
  return names;
}

}  // namespace normlab
