// A progress line for a terminal: "label  done/total unit  rate  elapsed  ETA", rewritten in place on
// stderr. It is silent when stderr is not a terminal (logs, tests, CI, a sweep's children), so
// nothing else in a captured output changes.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace normlab {

bool stderr_is_terminal();

// "42s", "3m05s", "2h07m".
std::string format_duration(double seconds);

class ProgressLine {
 public:
  // `already_done` of `total` were done before this line started (a sweep's reused points): the
  // rate counts only what is done while it runs.
  ProgressLine(std::string label, std::string unit, int64_t total, int64_t already_done, bool enabled);

  // Redraws the line with `done` finished and a free-form detail ("2 running"), at most twice a
  // second unless `force`.
  void update(int64_t done, const std::string& detail = "", bool force = false);
  // Erases the line, so that other output starts on a clean line (the next update redraws it).
  void clear();
  bool enabled() const { return enabled_; }

 private:
  using Clock = std::chrono::steady_clock;
  std::string label_, unit_;
  int64_t total_, start_done_;
  bool enabled_;
  bool drawn_ = false;
  Clock::time_point start_, last_draw_;
};

}  // namespace normlab
