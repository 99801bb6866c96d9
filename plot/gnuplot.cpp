#include "plot/gnuplot.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <sys/wait.h>

#include "core/error.h"
#include "core/files.h"
#include "io/shell_words.h"

namespace fs = std::filesystem;

namespace normlab {
namespace {

// gnuplot single-quoted string: only ' needs escaping, as ''.
std::string quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// A temporary directory removed when it goes out of scope.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "normlab-plot-XXXXXX").string();
    NL_CHECK(::mkdtemp(pattern.data()) != nullptr, "plot", "cannot create a temporary directory in {}",
             fs::temp_directory_path().string());
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

bool has_pngcairo() {
  static const bool available =
      std::system("gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1") == 0;
  return available;
}

std::string terminal_for(const std::string& output) {
  const std::string ext = fs::path(output).extension().string();
  if (ext == ".svg") return "svg size 900,560 dynamic noenhanced font 'sans,12' background '#ffffff'";
  if (ext == ".png") {
    return has_pngcairo() ? "pngcairo size 900,560 noenhanced font 'sans,10'"
                          : "png size 900,560 noenhanced";
  }
  fail("plot", "cannot tell the image format of '{}': use a .svg or .png file name", output);
}

// Tics at 1, 2 and 5 times the powers of ten in [low, high] (and at every digit when that gives
// fewer than 4): gnuplot labels only whole decades on a log axis, none when the range spans less.
std::string log_tics(double low, double high) {
  std::vector<double> tics;
  for (const std::vector<double>& digits : {std::vector<double>{1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}) {
    tics.clear();
    for (int e = static_cast<int>(std::floor(std::log10(low))); e <= static_cast<int>(std::ceil(std::log10(high))); ++e)
      for (const double d : digits)
        if (const double v = d * std::pow(10.0, e); v >= low && v <= high) tics.push_back(v);
    if (tics.size() >= 4) break;
  }
  std::string list;
  for (const double v : tics) list += fmt::format("{}{:g}", list.empty() ? "" : ", ", v);
  return list.empty() ? "" : "set ytics (" + list + ")\n";
}

// The gnuplot script drawing `chart` into out_path; plot_line lists the series (data file, style, title).
std::string gnuplot_script(const Chart& chart, const std::string& terminal, const fs::path& out_path,
                           const std::string& plot_line) {
  std::string script;
  script += "set terminal " + terminal + "\n";
  script += "set output " + quote(out_path.string()) + "\n";
  script += "set title " + quote(chart.title) + "\n";
  script += "set xlabel " + quote(chart.xlabel) + "\n";
  script += "set ylabel " + quote(chart.ylabel) + "\n";
  script += "set grid\n";
  // Long legend entries (sweep point names) go below the plot, so that they cannot squeeze it.
  size_t longest = 0;
  for (const ChartSeries& s : chart.series) longest = std::max(longest, s.title.size());
  script += longest > 28 || chart.series.size() > 14 ? "set key outside below left Left reverse maxrows 6\n"
                                                      : "set key outside right top\n";
  script += "set offsets graph 0.02, graph 0.02, 0, 0\n";  // lines off the left and right frame
  if (chart.log_y) script += "set logscale y\nset format y '%g'\n";
  if (const auto [low, high] = fitted_y_range(chart); std::isfinite(low) && std::isfinite(high)) {
    script += fmt::format("set yrange [{:.17g}:{:.17g}]\n", low, high);
    if (chart.log_y && high / low < 300) script += log_tics(low, high);
  }
  if (chart.log_x) script += "set logscale x\nset format x '%g'\n";
  if (chart.integer_x) script += "set xtics 1\nset mxtics 1\n";
  if (chart.x_from_zero) script += "set xrange [0:*]\n";
  script += "plot " + plot_line + "\nunset output\n";
  return script;
}

// The shaded bands of the series that have one, drawn first so that every line lies on top.
std::string band_plots(const Chart& chart, const fs::path& dir) {
  std::string plot_line;
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const ChartSeries& s = chart.series[i];
    if (s.band.empty()) continue;
    NL_CHECK(s.band.size() == s.points.size(), "plot", "series '{}' has {} points but {} band entries", s.title,
             s.points.size(), s.band.size());
    const fs::path data = dir / fmt::format("band{}.dat", i);
    std::ofstream out(data);
    int points = 0;
    for (size_t k = 0; k < s.points.size(); ++k) {
      const double x = s.points[k].first, low = s.band[k].first, high = s.band[k].second;
      if (!std::isfinite(x) || !std::isfinite(low) || !std::isfinite(high)) continue;
      if ((chart.log_y && low <= 0) || (chart.log_x && x <= 0)) continue;
      out << fmt::format("{} {} {}\n", x, low, high);
      ++points;
    }
    if (points < 2) continue;
    plot_line += fmt::format("{}{} using 1:2:3 with filledcurves fs transparent solid 0.18 noborder lc {} notitle",
                             plot_line.empty() ? "" : ", \\\n  ", quote(data.string()), s.color);
  }
  return plot_line;
}

// Every drawable y value of the chart (points, band edges, error bar ends).
std::vector<double> drawable_y(const Chart& chart) {
  std::vector<double> ys;
  auto keep = [&](double x, double y) {
    if (std::isfinite(x) && std::isfinite(y) && !(chart.log_y && y <= 0) && !(chart.log_x && x <= 0)) ys.push_back(y);
  };
  for (const ChartSeries& s : chart.series)
    for (size_t k = 0; k < s.points.size(); ++k) {
      const auto [x, y] = s.points[k];
      keep(x, y);
      if (k < s.band.size()) keep(x, s.band[k].first), keep(x, s.band[k].second);
      if (k < s.y_err.size() && std::isfinite(s.y_err[k])) keep(x, y - s.y_err[k]), keep(x, y + s.y_err[k]);
    }
  return ys;
}

// The titles as drawn: a series equal to an earlier one says so.
std::vector<std::string> drawn_titles(const Chart& chart, std::vector<bool>& identical) {
  std::vector<std::string> titles;
  identical.assign(chart.series.size(), false);
  for (size_t i = 0; i < chart.series.size(); ++i) {
    titles.push_back(chart.series[i].title);
    for (size_t j = 0; j < i; ++j)
      if (!chart.series[i].points.empty() && chart.series[i].points == chart.series[j].points) {
        titles.back() += " (identical to " + chart.series[j].title + ")";
        identical[i] = true;
        break;
      }
  }
  return titles;
}

}  // namespace

std::pair<double, double> fitted_y_range(const Chart& chart) {
  const std::vector<double> ys = drawable_y(chart);
  if (ys.empty()) return {NAN, NAN};
  const auto [lo_it, hi_it] = std::minmax_element(ys.begin(), ys.end());
  double low = *lo_it, high = *hi_it;
  if (chart.log_y) {
    const double pad = std::pow(high / low, 0.05) * 1.02;  // 5% of the span in decades, and 2% at least
    return {low / pad, high * pad};
  }
  const double span = high > low ? high - low : std::max(std::abs(high), 1e-12);
  const double padded_low = low - 0.05 * span;
  return {low >= 0 && padded_low < 0 ? 0.0 : padded_low, high + 0.05 * span};
}

void render_chart(const Chart& chart, const std::string& output) {
  const std::string terminal = terminal_for(output);
  const fs::path out_path = fs::absolute(output);
  if (out_path.has_parent_path()) {
    std::error_code error;
    fs::create_directories(out_path.parent_path(), error);
    NL_CHECK(!error, "plot", "cannot create the directory of '{}': {}", output, error.message());
  }

  TempDir temp;
  std::string plot_line = band_plots(chart, temp.path);
  std::vector<bool> identical;
  const std::vector<std::string> titles = drawn_titles(chart, identical);
  int drawn = 0;
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const ChartSeries& s = chart.series[i];
    const fs::path data = temp.path / fmt::format("series{}.dat", i);
    std::ofstream out(data);
    int points = 0;
    const bool bars = !s.y_err.empty();
    NL_CHECK(!bars || s.y_err.size() == s.points.size(), "plot", "series '{}' has {} points but {} error bars",
             s.title, s.points.size(), s.y_err.size());
    for (size_t k = 0; k < s.points.size(); ++k) {
      const auto [x, y] = s.points[k];
      if (!std::isfinite(x) || !std::isfinite(y) || (chart.log_y && y <= 0) || (chart.log_x && x <= 0)) continue;
      out << (bars ? fmt::format("{} {} {}\n", x, y, std::isfinite(s.y_err[k]) ? s.y_err[k] : 0.0)
                   : fmt::format("{} {}\n", x, y));
      ++points;
    }
    if (points == 0) continue;  // nothing drawable in this series (gnuplot would fail on it)
    const std::string style = bars ? "yerrorlines pt 7 ps 0.6"
                              : identical[i] ? "linespoints pt 6 ps 1.2 pi -4"  // open markers over the twin
                              : (s.markers || points == 1 ? "linespoints pt 7 ps 0.6" : "lines");
    plot_line += fmt::format("{}{} using {} with {} lw 2 lc {} dt {} title {}", plot_line.empty() ? "" : ", \\\n  ",
                             quote(data.string()), bars ? "1:2:3" : "1:2", style, s.color, s.dash,
                             quote(titles[i]));
    ++drawn;
  }
  NL_CHECK(drawn > 0, "plot", "nothing to draw in '{}': no series has a finite{} value", output,
           chart.log_y ? " positive" : "");

  const std::string script = gnuplot_script(chart, terminal, out_path, plot_line);
  const fs::path script_path = temp.path / "chart.gp";
  std::ofstream(script_path) << script;

  const fs::path log = temp.path / "gnuplot.log";
  const int status = std::system(
      fmt::format("gnuplot {} >{} 2>&1", shell_quote(script_path.string()), shell_quote(log.string())).c_str());
  NL_CHECK(status != -1 && WEXITSTATUS(status) != 127, "plot",
           "could not run gnuplot to draw '{}': is it installed (Debian: gnuplot-nox)?", output);
  NL_CHECK(status == 0, "plot", "gnuplot failed drawing '{}':\n{}", output, read_whole_file(log, "plot"));
  std::error_code error;
  NL_CHECK(fs::exists(out_path) && fs::file_size(out_path, error) > 0, "plot",
           "gnuplot wrote nothing to '{}':\n{}", output, read_whole_file(log, "plot"));
}

}  // namespace normlab
