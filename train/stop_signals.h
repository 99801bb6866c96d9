// Stopping a training run from outside without losing it. While a StopSignalGuard lives, the first
// SIGINT (Ctrl-C) or SIGTERM (a batch scheduler's stop) is only recorded: the trainer finishes the
// step it is in, writes a checkpoint and summary.json with status "interrupted", and returns, and
// `normlab train` prints the command that continues the run and exits 128 + the signal (130, 143).
// The handler is installed with SA_RESETHAND, so a second signal ends the process at once; the last
// complete checkpoint generation stays readable (train/checkpoint.h writes each one crash-safe).
#pragma once
#include <csignal>

namespace normlab {

class StopSignalGuard {
 public:
  StopSignalGuard();   // installs the handlers; clears a signal recorded earlier
  ~StopSignalGuard();  // restores the previous handlers
  StopSignalGuard(const StopSignalGuard&) = delete;
  StopSignalGuard& operator=(const StopSignalGuard&) = delete;

 private:
  struct sigaction previous_int_{}, previous_term_{};
};

// The stop signal received while a guard lived (SIGINT or SIGTERM), 0 if none.
int stop_signal_received();

}  // namespace normlab
