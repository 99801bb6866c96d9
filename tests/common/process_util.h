// Helpers for tests that start the normlab binary in the background and watch its processes.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace normlab::test {

// Starts argv[0] with argv, stdout and stderr to `log`; returns the pid (-1 on failure).
inline pid_t spawn_background(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

// Polls `done` every 20 ms for up to `seconds`; returns its last answer.
inline bool wait_until(const std::function<bool()>& done, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return done();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// The /proc/PID/stat fields after the command name: state (index 0), ppid (index 1), ...
inline std::vector<std::string> stat_fields(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  std::vector<std::string> fields;
  if (close == std::string::npos) return fields;
  std::istringstream rest(text.substr(close + 1));
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

// A process that has ended (gone, or a zombie nobody has reaped yet).
inline bool has_ended(pid_t pid) {
  const std::vector<std::string> fields = stat_fields(pid);
  return fields.empty() || fields[0] == "Z";
}

// The live processes whose parent is `parent`.
inline std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    const std::vector<std::string> fields = stat_fields(pid);
    if (fields.size() > 1 && fields[0] != "Z" && fields[1] == std::to_string(parent)) children.push_back(pid);
  }
  return children;
}

// Waits up to `seconds` for `pid` (a child of this process) to end; its wait status, or -1
// after SIGKILLing it when it did not end in time.
inline int wait_or_kill(pid_t pid, double seconds) {
  int status = 0;
  if (wait_until([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, seconds)) return status;
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

// SIGKILLs the listed processes at the end of a test, whatever it asserted: a failing test must
// not leave training processes behind.
struct KillAtExit {
  std::vector<pid_t> pids;
  ~KillAtExit() {
    for (const pid_t pid : pids)
      if (!has_ended(pid)) ::kill(pid, SIGKILL);
  }
};

}  // namespace normlab::test
