// Child processes that never outlive their parent (the runs of a sweep), and the stop signals
// (SIGINT, SIGTERM, SIGHUP) that the parent forwards to them.
//
// A child asks the kernel for SIGTERM when its parent dies (PR_SET_PDEATHSIG), so that even a
// parent killed with SIGKILL, which cannot forward anything, leaves no child running. A parent
// that catches a stop signal (StopSignals) sends it on to its children, waits for them, and
// throws Interrupted; `normlab` then exits with 128 + the signal number.
#pragma once
#include <signal.h>
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"

namespace normlab {

struct Interrupted : Error {
  Interrupted(int signal, const std::string& message) : Error(message), signal_number(signal) {}
  int signal_number;
};

// Starts argv[0] (a path) with argv, stdin from /dev/null and stdout and stderr appended to
// `log`; returns its pid, or -1 with `error` set. A child whose parent is gone before it could
// ask for the death signal exits at once (127).
pid_t spawn_child(const std::vector<std::string>& argv, const std::filesystem::path& log, std::string& error);

// While it lives, SIGINT, SIGTERM and SIGHUP only record which arrived (the previous handlers
// come back with the destructor). One at a time.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  int received() const;  // the last stop signal received, 0 if none
  int count() const;     // how many have arrived

 private:
  struct sigaction previous_[3];
};

// Sends `signal` to each child and waits for all of them; a second stop signal while waiting
// makes it SIGKILL. Returns the wait statuses in the order of `pids`.
std::vector<int> stop_children(const std::vector<pid_t>& pids, int signal, const StopSignals& signals);

// "exit code 2", "killed by signal 15 (Terminated)".
std::string describe_wait_status(int status);

}  // namespace normlab
