#include "plot/gnuplot.h"

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

// The gnuplot script drawing `chart` into out_path; plot_line lists the series (data file, style, title).
std::string gnuplot_script(const Chart& chart, const std::string& terminal, const fs::path& out_path,
                           const std::string& plot_line) {
  std::string script;
  script += "set terminal " + terminal + "\n";
  script += "set output " + quote(out_path.string()) + "\n";
  script += "set title " + quote(chart.title) + "\n";
  script += "set xlabel " + quote(chart.xlabel) + "\n";
  script += "set ylabel " + quote(chart.ylabel) + "\n";
  script += "set grid\nset key outside right top\n";
  script += "set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05\n";  // lines off the frame
  if (chart.log_y) script += "set logscale y\nset format y '%g'\n";
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

}  // namespace

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
                                   : (s.markers || points == 1 ? "linespoints pt 7 ps 0.6" : "lines");
    plot_line += fmt::format("{}{} using {} with {} lw 2 lc {} dt {} title {}", plot_line.empty() ? "" : ", \\\n  ",
                             quote(data.string()), bars ? "1:2:3" : "1:2", style, s.color, s.dashed ? 2 : 1,
                             quote(s.title));
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
