#include "optim/lr_multipliers.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/ranges.h>

#include "core/error.h"

namespace normlab {

namespace {

// The groups of a warmup-groups text: the role groups, then the halves of the blocks.
std::vector<std::string> known_groups() {
  std::vector<std::string> groups;
  for (const auto& [group, name] : EnumNames<ParamGroup>::values)
    if (group != ParamGroup::None) groups.emplace_back(name);
  groups.insert(groups.end(), {"top_half", "bottom_half"});
  return groups;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    std::string part = text.substr(start, comma - start);
    part.erase(0, part.find_first_not_of(' '));
    part.erase(part.find_last_not_of(' ') + 1);
    parts.push_back(part);
    start = comma + 1;
  }
  return parts;
}

double factor_of(const std::string& text, const std::string& whole) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  NL_CHECK(!text.empty() && end && *end == '\0' && std::isfinite(v) && v >= 0, "lr_multipliers",
           "optim.layer_lr_scale = \"{}\": '{}' is not a factor >= 0", whole, text);
  return v;
}

// A single stack's layer N (blocks.N.*) -> N, else -1.
int64_t block_of(const Var& param) {
  return param.role().stack == LayerStack::Single ? param.role().layer : -1;
}

// Whether `param` belongs to one of `groups`: its kind (parameter_group), or top_half /
// bottom_half for the blocks in that half (an odd middle block in neither, as the layer scale's).
bool in_warmup_groups(const Var& param, const std::vector<std::string>& groups, int64_t n_layers) {
  auto has = [&](const std::string& g) { return std::find(groups.begin(), groups.end(), g) != groups.end(); };
  if (has(parameter_group(param))) return true;
  const int64_t block = block_of(param);
  if (block < 0 || block >= n_layers) return false;
  return (has("bottom_half") && block < n_layers / 2) || (has("top_half") && block >= n_layers - n_layers / 2);
}

}  // namespace

std::vector<double> parse_layer_lr_scale(const std::string& text, int64_t n_layers) {
  std::vector<double> factors(static_cast<size_t>(n_layers), 1.0);
  if (text.empty()) return factors;
  for (const char* half : {"top_half:", "bottom_half:"}) {
    const std::string prefix = half;
    if (text.rfind(prefix, 0) != 0) continue;
    const double x = factor_of(text.substr(prefix.size()), text);
    for (int64_t l = 0; l < n_layers / 2; ++l) factors[static_cast<size_t>(prefix[0] == 't' ? n_layers - 1 - l : l)] = x;
    return factors;
  }
  const std::vector<std::string> parts = split_commas(text);
  NL_CHECK(static_cast<int64_t>(parts.size()) == n_layers, "lr_multipliers",
           "optim.layer_lr_scale = \"{}\": {} factor(s) for {} layers; give one per layer, or top_half:X or "
           "bottom_half:X", text, parts.size(), n_layers);
  for (size_t l = 0; l < parts.size(); ++l) factors[l] = factor_of(parts[l], text);
  return factors;
}

std::vector<std::string> parse_warmup_groups(const std::string& text) {
  if (text.empty()) return {};
  std::vector<std::string> groups = split_commas(text);
  const std::vector<std::string> known = known_groups();
  for (const std::string& g : groups)
    NL_CHECK(std::find(known.begin(), known.end(), g) != known.end(), "lr_multipliers",
             "schedule.warmup_groups = \"{}\": unknown group '{}' (known: {})", text, g, fmt::join(known, ", "));
  return groups;
}

std::string parameter_group(const Var& param) { return enum_name(param.role().group); }

std::vector<double> lr_multipliers(const std::vector<Var>& params, const LrMultiplierSpec& spec,
                                   const ScheduleConfig& schedule, double lr_max, int64_t step, int64_t total_steps) {
  const std::vector<double> layer = parse_layer_lr_scale(spec.layer_scale, spec.n_layers);
  const std::vector<std::string> warm = parse_warmup_groups(spec.warmup_groups);
  double unwarmed = 1.0;  // r0(step) / r(step) for the parameters outside the warmup groups
  if (!warm.empty()) {
    ScheduleConfig none = schedule;
    none.warmup_steps = 0;
    const double r = learning_rate(schedule, lr_max, step, total_steps);
    unwarmed = r > 0 ? learning_rate(none, lr_max, step, total_steps) / r : 1.0;
  }
  std::vector<double> out;
  for (const Var& param : params) {
    const int64_t block = block_of(param);
    double m = block >= 0 && block < spec.n_layers ? layer[static_cast<size_t>(block)] : 1.0;
    if (!warm.empty() && !in_warmup_groups(param, warm, spec.n_layers)) m *= unwarmed;
    out.push_back(m);
  }
  return out;
}

}  // namespace normlab
