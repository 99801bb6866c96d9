#include "sweep/progress_line.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/core.h>

namespace normlab {

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

std::string format_duration(double seconds) {
  const auto s = static_cast<int64_t>(std::llround(std::max(seconds, 0.0)));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
}

ProgressLine::ProgressLine(std::string label, std::string unit, int64_t total, int64_t already_done,
                           bool enabled)
    : label_(std::move(label)), unit_(std::move(unit)), total_(total), start_done_(already_done),
      enabled_(enabled), start_(Clock::now()) {}

void ProgressLine::update(int64_t done, const std::string& detail, bool force) {
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  if (drawn_ && !force && now - last_draw_ < std::chrono::milliseconds(500)) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(done - start_done_) / elapsed : 0.0;  // per second
  const std::string eta = rate > 0 ? format_duration(static_cast<double>(total_ - done) / rate) : "--";
  // Runs take minutes: a rate per minute reads better than 0.01/s.
  fmt::print(stderr, "\r\033[K{}  {}/{} {}{}{}  {:.2f} {}/min  elapsed {}  ETA {}", label_, done, total_, unit_,
             detail.empty() ? "" : "  ", detail, rate * 60.0, unit_, format_duration(elapsed), eta);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::clear() {
  if (!enabled_ || !drawn_) return;
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace normlab
