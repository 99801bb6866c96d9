#include "io/directory_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"

namespace fs = std::filesystem;

namespace normlab {
namespace {

// flock that retries when a signal interrupts it; returns 0 or the errno.
int flock_retrying(int fd, int operation) {
  while (::flock(fd, operation) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

// The pid text in a lock file (0 if empty or unreadable).
pid_t read_pid(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof(text) - 1, 0);
  return n > 0 ? static_cast<pid_t>(std::strtol(text, nullptr, 10)) : 0;
}

std::string describe_holder(pid_t pid) {
  return pid > 0 ? fmt::format("another normlab process (pid {})", pid) : std::string("another normlab process");
}

}  // namespace

DirectoryLock::DirectoryLock(const fs::path& dir, const std::string& op) {
  const fs::path path = dir / kLockFile;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  NL_CHECK(fd_ >= 0, op, "cannot open the lock file '{}': {}", path.string(), std::strerror(errno));
  const int error = flock_retrying(fd_, LOCK_EX | LOCK_NB);
  if (error != 0) {
    const pid_t pid = read_pid(fd_);
    ::close(fd_);
    fd_ = -1;
    NL_CHECK(error != EWOULDBLOCK, op, "'{}' is in use: {} is writing it; wait for it to finish or stop it",
             dir.string(), describe_holder(pid));
    fail(op, "cannot lock '{}': {}", path.string(), std::strerror(error));
  }
  // The pid is for messages only: a full disk that refuses it does not make the lock less held.
  const std::string pid_text = fmt::format("{}\n", ::getpid());
  if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, pid_text.data(), pid_text.size(), 0);
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the lock
}

DirectoryLock::DirectoryLock(DirectoryLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

std::optional<pid_t> DirectoryLock::holder(const fs::path& dir) {
  const int fd = ::open((dir / kLockFile).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<pid_t> pid;
  if (flock_retrying(fd, LOCK_SH | LOCK_NB) == EWOULDBLOCK) pid = read_pid(fd);
  ::close(fd);  // also drops the shared lock if it was taken
  return pid;
}

}  // namespace normlab
