#include "sweep/child_process.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace fs = std::filesystem;

namespace normlab {
namespace {

constexpr int kStopSignals[3] = {SIGINT, SIGTERM, SIGHUP};
volatile sig_atomic_t g_last_signal = 0;
volatile sig_atomic_t g_signal_count = 0;

extern "C" void record_stop_signal(int signal) {
  g_last_signal = signal;
  g_signal_count = g_signal_count + 1;
}

// In the child between fork and exec: only async-signal-safe calls.
[[noreturn]] void exec_child(char* const* args, pid_t parent, int log_fd, const std::string& exec_failed) {
  if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != parent) ::_exit(127);
  const int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd < 0 || ::dup2(null_fd, STDIN_FILENO) < 0 || ::dup2(log_fd, STDOUT_FILENO) < 0 ||
      ::dup2(log_fd, STDERR_FILENO) < 0)
    ::_exit(127);
  ::execv(args[0], args);
  (void)!::write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
  ::_exit(127);
}

}  // namespace

pid_t spawn_child(const std::vector<std::string>& argv, const fs::path& log, std::string& error) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string exec_failed = fmt::format("error: cannot execute '{}'\n", argv.at(0));
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    error = fmt::format("cannot open '{}': {}", log.string(), std::strerror(errno));
    return -1;
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(args.data(), parent, log_fd, exec_failed);
  const int fork_error = errno;
  ::close(log_fd);
  if (pid < 0) error = fmt::format("cannot start '{}': fork failed: {}", argv[0], std::strerror(fork_error));
  return pid;
}

StopSignals::StopSignals() {
  g_last_signal = 0;
  g_signal_count = 0;
  struct sigaction action {};
  action.sa_handler = record_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a signal interrupts waitpid and sleeps
  for (int i = 0; i < 3; ++i) ::sigaction(kStopSignals[i], &action, &previous_[i]);
}

StopSignals::~StopSignals() {
  for (int i = 0; i < 3; ++i) ::sigaction(kStopSignals[i], &previous_[i], nullptr);
}

int StopSignals::received() const { return g_last_signal; }
int StopSignals::count() const { return g_signal_count; }

std::vector<int> stop_children(const std::vector<pid_t>& pids, int signal, const StopSignals& signals) {
  for (const pid_t pid : pids) ::kill(pid, signal);
  const int count_at_start = signals.count();
  bool killed = false;
  std::vector<int> statuses(pids.size(), 0);
  for (size_t i = 0; i < pids.size(); ++i) {
    while (::waitpid(pids[i], &statuses[i], 0) < 0) {
      if (errno != EINTR) break;
      if (!killed && signals.count() > count_at_start) {  // asked twice: no more waiting
        for (size_t k = i; k < pids.size(); ++k) ::kill(pids[k], SIGKILL);
        killed = true;
      }
    }
  }
  return statuses;
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exit code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return fmt::format("wait status {}", status);
}

}  // namespace normlab
