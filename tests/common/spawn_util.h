// Helpers for tests that start the built `normlab` binary as a child process they can time out,
// kill at a moment of their choosing, and give extra environment variables (fault injection).
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "command_util.h"

namespace normlab::test {

// Starts `normlab <args>` with `env` ("NAME=value") added to this process's environment; stdout and
// stderr go to `log_path`. Returns the child's pid (-1 if fork failed).
inline pid_t spawn_normlab(const std::vector<std::string>& args, const std::string& log_path,
                           const std::vector<std::string>& env = {}) {
  // Everything is allocated before fork: the child of a threaded process may only exec.
  std::vector<char*> argv = {const_cast<char*>(kNormlab.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
  for (const std::string& entry : env) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (log >= 0) {
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
  }
  ::execve(kNormlab.c_str(), argv.data(), envp.data());
  ::_exit(127);
}

struct ProcessEnd {
  bool running = false;  // still running (try_wait only)
  int exit_code = -1;    // -1: did not exit normally
  int signal = 0;        // the signal that ended it, 0 if none
};

inline ProcessEnd end_of(int status) {
  ProcessEnd end;
  if (WIFEXITED(status)) end.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) end.signal = WTERMSIG(status);
  return end;
}

// Reaps the child if it has ended, without blocking.
inline ProcessEnd try_wait(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, WNOHANG) == 0) return ProcessEnd{true};
  return end_of(status);
}

// Waits for the child at most `timeout_s` seconds; a child still running then is SIGKILLed and
// reported with signal SIGKILL.
inline ProcessEnd wait_at_most(pid_t pid, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    const ProcessEnd end = try_wait(pid);
    if (!end.running) return end;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return end_of(status);
}

}  // namespace normlab::test
