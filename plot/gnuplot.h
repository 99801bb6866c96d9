// A minimal gnuplot driver: line charts written to .svg or .png. The data and script go into a
// temporary directory, gnuplot runs on the script, and any failure is an error quoting gnuplot.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace normlab {

struct ChartSeries {
  std::string title;                              // legend entry
  std::vector<std::pair<double, double>> points;  // (x, y), in drawing order
  int color = 1;                                  // gnuplot line colour index (1, 2, ...)
  int dash = 1;                                   // gnuplot dash type: 1 solid, 2 dashed, 3, 4, ...
  bool markers = false;                           // draw a point at each value
  std::vector<double> y_err;                      // empty, or one error bar (+-) per point
  // empty, or one (low, high) per point: a shaded band (a confidence interval) under the line
  std::vector<std::pair<double, double>> band;
};

struct Chart {
  std::string title, xlabel, ylabel;
  bool log_y = false;        // non-positive and non-finite y are dropped on a log scale
  bool log_x = false;        // likewise for x
  bool integer_x = false;    // one tick per integer x (layer indices)
  bool x_from_zero = false;  // the x axis starts at 0
  std::vector<ChartSeries> series;
};

// The y range drawn: the drawable values (points, bands, error bars) padded by 5% of their span
// on a linear axis, never below 0 when no value is negative; on a log axis by 5% of their span in
// decades (not widened to whole decades). {NaN, NaN} when nothing is drawable.
std::pair<double, double> fitted_y_range(const Chart& chart);

// Series whose points equal an earlier series' points draw on top of it: their legend entry says
// "(identical to <earlier title>)" and they get open markers, so that both stay visible.
// Renders by the output's extension: ".svg" (svg terminal) or ".png" (pngcairo when gnuplot has
// it, else png). Creates the output's directory if needed. Throws "[plot] ..." when there is
// nothing to draw, gnuplot is missing, or gnuplot fails (with its message).
void render_chart(const Chart& chart, const std::string& output);

}  // namespace normlab
