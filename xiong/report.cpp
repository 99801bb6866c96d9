#include "xiong/report.h"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "io/atomic_file.h"
#include "nn/placement.h"

namespace fs = std::filesystem;

namespace normlab::xiong {

std::string not_reproduced_sentence(const std::vector<Section>& sections) {
  std::vector<std::string> ids;
  size_t decided = 0;
  for (const Section& s : sections)
    for (const Verdict& v : s.verdicts) {
      ++decided;
      if (v.verdict != "reproduced") ids.push_back(fmt::format("{} ({})", v.id, v.verdict));
    }
  if (decided == 0) return "No claim is decided in this report.";
  if (ids.empty()) return "Every claim above is reproduced.";
  return fmt::format("Not reproduced: {}.", fmt::join(ids, ", "));
}

std::string now_text() {
  const std::time_t t = std::time(nullptr);
  char buffer[64];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M %Z", std::localtime(&t));
  return buffer;
}


void Context::log(const std::string& message) const {
  if (quiet) return;
  fmt::print("[reproduce] {}\n", message);
  std::fflush(stdout);
}

std::string num(double v, int digits) {
  if (!std::isfinite(v)) return "-";
  return fmt::format("{:.{}g}", v, digits);
}

std::string mean_ci_text(const std::vector<double>& values, int digits) {
  const Interval i = mean_interval(values);
  if (!i.valid()) return "-";
  if (i.n == 1) return num(i.estimate, digits);
  return interval_text(i, digits);
}

std::string md_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  auto line = [&](const std::vector<std::string>& cells) {
    NL_CHECK(cells.size() == header.size(), "report", "a table row has {} cells, its header {}: {}", cells.size(),
             header.size(), cells.empty() ? std::string() : cells.front());
    std::string text = "|";
    for (const std::string& c : cells) {
      std::string escaped;
      for (const char ch : c) escaped += ch == '|' ? std::string("\\|") : std::string(1, ch);
      text += " " + escaped + " |";
    }
    return text + "\n";
  };
  std::string text = line(header);
  text += "|";
  for (size_t i = 0; i < header.size(); ++i) text += "---|";
  text += "\n";
  for (const auto& row : rows) text += line(row);
  return text;
}

std::string figure(const Context& ctx, const Chart& chart, const std::string& stem) {
  const fs::path svg = ctx.figures_dir / (stem + ".svg");
  const fs::path png = ctx.figures_dir / (stem + ".png");
  try {
    render_chart(chart, svg.string());
    render_chart(chart, png.string());
  } catch (const Error& e) {
    fmt::print(stderr, "[reproduce] figure {} not drawn: {}\n", stem, e.what());
    return fmt::format("*(figure `{}` could not be drawn: {})*\n", stem, e.what());
  }
  const std::string rel = fs::relative(svg, ctx.out_dir).string();
  const std::string rel_png = fs::relative(png, ctx.out_dir).string();
  return fmt::format("![{}]({}) ([PNG]({}))\n", chart.title, rel, rel_png);
}

nlohmann::json cached(const Context& ctx, const std::string& name, const nlohmann::json& key,
                      const std::function<nlohmann::json()>& compute) {
  const fs::path path = ctx.out_dir / "cache" / (name + ".json");
  {
    std::ifstream in(path);
    if (in) {
      const nlohmann::json stored = nlohmann::json::parse(in, nullptr, false);
      if (stored.is_object() && stored.contains("key") && stored["key"] == key && stored.contains("value")) {
        ctx.log(fmt::format("{}: cached in {}", name, path.string()));
        return stored["value"];
      }
    }
  }
  ctx.log(fmt::format("{}: measuring", name));
  nlohmann::json value = compute();
  fs::create_directories(path.parent_path());
  write_file_atomic(path.string(), nlohmann::json{{"key", key}, {"value", value}}.dump(1) + "\n");
  return value;
}

std::string placement_label(const std::string& placement) {
  const std::optional<NormPlacement> row = find_placement_kind(placement);
  return row ? placement_kind(*row).label : placement;
}

int color_of(const std::string& placement) {
  static const std::vector<std::string> order = {"post", "pre", "deepnorm", "sandwich", "none"};
  const auto it = std::find(order.begin(), order.end(), placement);
  return it == order.end() ? 7 : static_cast<int>(it - order.begin()) + 1;
}

}  // namespace normlab::xiong
