#include "train/stop_signals.h"

#include <atomic>

namespace normlab {

namespace {

std::atomic<int> g_stop_signal{0};  // lock-free: written from the signal handler

extern "C" void record_stop(int signal) { g_stop_signal.store(signal); }

struct sigaction stop_action() {
  struct sigaction action{};
  action.sa_handler = record_stop;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // the second signal gets the default action: the process ends
  return action;
}

}  // namespace

StopSignalGuard::StopSignalGuard() {
  g_stop_signal.store(0);
  const struct sigaction action = stop_action();
  sigaction(SIGINT, &action, &previous_int_);
  sigaction(SIGTERM, &action, &previous_term_);
}

StopSignalGuard::~StopSignalGuard() {
  sigaction(SIGINT, &previous_int_, nullptr);
  sigaction(SIGTERM, &previous_term_, nullptr);
}

int stop_signal_received() { return g_stop_signal.load(); }

}  // namespace normlab
