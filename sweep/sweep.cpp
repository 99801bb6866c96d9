// Sweeps: axis parsing, the grid and its point names (sweep_run.cpp runs the points as child
// `normlab train` processes, sweep_csv.cpp writes and reads sweep.csv).
#include "sweep/sweep.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "config/fingerprint.h"

namespace normlab {

namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// Splits "v1,v2,..." at commas outside double quotes ("\"a,b\",c" has two values).
std::vector<std::string> split_values(const std::string& text, const std::string& argument) {
  std::vector<std::string> values;
  std::string current;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '"' && (i == 0 || text[i - 1] != '\\')) quoted = !quoted;
    if (ch == ',' && !quoted) {
      values.push_back(trim(current));
      current.clear();
    } else {
      current += ch;
    }
  }
  NL_CHECK(!quoted, "sweep", "axis '{}': unterminated '\"'", argument);
  values.push_back(trim(current));
  return values;
}

// The text of a value inside a directory name: quotes dropped, unsafe characters replaced.
std::string name_safe(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    if (ch == '"' || ch == '\'') continue;
    const bool safe = std::isalnum(static_cast<unsigned char>(ch)) || std::strchr("._=,+-", ch) != nullptr;
    out += safe ? ch : '_';
  }
  return out.empty() ? "_" : out;
}

// File systems limit a name to 255 bytes: a long name keeps its start and gets a hash of the rest.
std::string limit_length(const std::string& name) {
  if (name.size() <= 200) return name;
  return fmt::format("{}-{}", name.substr(0, 180), hex_fingerprint(name));
}

// A TOML basic string holding `text` (paths and names passed to the child as overrides).
}  // namespace

std::vector<SweepAxis> parse_sweep_axes(const std::vector<std::string>& arguments) {
  std::vector<SweepAxis> axes;
  std::set<std::string> config_keys;  // "seed" counts as train.seed and model.seed
  for (const std::string& argument : arguments) {
    const size_t eq = argument.find('=');
    const std::string key = eq == std::string::npos ? "" : trim(argument.substr(0, eq));
    NL_CHECK(!key.empty(), "sweep", "axis '{}': expected key=v1,v2,... (e.g. optim.lr=1e-3,3e-4)", argument);
    NL_CHECK(key == "seed" || key == "preset" || key.find('.') != std::string::npos, "sweep",
             "axis '{}': the key must be section.key, preset or seed, got '{}'", argument, key);
    NL_CHECK(key != "train.name" && key != "train.out_dir", "sweep",
             "axis '{}': the sweep sets train.name and train.out_dir of each run itself", argument);
    SweepAxis axis{key, split_values(argument.substr(eq + 1), argument)};
    std::set<std::string> seen;
    for (size_t i = 0; i < axis.values.size(); ++i) {
      NL_CHECK(!axis.values[i].empty(), "sweep", "axis '{}': value {} is empty", argument, i + 1);
      NL_CHECK(seen.insert(axis.values[i]).second, "sweep", "axis '{}': value '{}' is given twice", argument,
               axis.values[i]);
    }
    const std::vector<std::string> covered =
        key == "seed" ? std::vector<std::string>{"train.seed", "model.seed"} : std::vector<std::string>{key};
    for (const std::string& k : covered)
      NL_CHECK(config_keys.insert(k).second, "sweep", "axis '{}': '{}' is already swept by another axis",
               argument, k);
    axes.push_back(std::move(axis));
  }
  return axes;
}

std::vector<SweepPoint> expand_grid(const std::vector<SweepAxis>& axes) {
  // Name labels: the key's last part ("lr"), or the whole key where two axes share that part.
  std::vector<std::string> labels;
  for (const SweepAxis& axis : axes) {
    NL_CHECK(!axis.values.empty(), "sweep", "axis '{}' has no values", axis.key);
    labels.push_back(axis.key.substr(axis.key.rfind('.') + 1));
  }
  const std::vector<std::string> endings = labels;
  for (size_t i = 0; i < axes.size(); ++i)
    if (std::count(endings.begin(), endings.end(), endings[i]) > 1) labels[i] = axes[i].key;

  std::vector<SweepPoint> points;
  std::vector<size_t> index(axes.size(), 0);  // an odometer, last axis fastest
  std::set<std::string> names;
  while (true) {
    SweepPoint point;
    std::string name;
    for (size_t a = 0; a < axes.size(); ++a) {
      point.overrides.emplace_back(axes[a].key, axes[a].values[index[a]]);
      if (a > 0) name += ',';
      name += fmt::format("{}={}", name_safe(labels[a]), name_safe(axes[a].values[index[a]]));
    }
    point.name = axes.empty() ? "base" : limit_length(name);
    NL_CHECK(names.insert(point.name).second, "sweep",
             "two points get the run directory name '{}' (values that differ only in quotes or "
             "unsafe characters?)", point.name);
    points.push_back(std::move(point));
    size_t a = axes.size();
    while (a > 0 && ++index[a - 1] == axes[a - 1].values.size()) index[--a] = 0;
    if (a == 0) break;
  }
  return points;
}

std::vector<std::string> point_override_texts(const SweepPoint& point) {
  std::vector<std::string> texts;
  for (const auto& [key, value] : point.overrides) {
    if (key == "seed") {
      texts.push_back("train.seed=" + value);
      texts.push_back("model.seed=" + value);
    } else {
      texts.push_back(key + "=" + value);
    }
  }
  return texts;
}

}  // namespace normlab
