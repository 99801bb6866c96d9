// One writer per directory (a run directory, a sweep directory): an exclusive flock(2) on
// DIR/.normlab.lock, held while a DirectoryLock lives. The file holds the holder's pid, for the
// message a second writer gets. The kernel drops the lock when its holder exits, however it exits
// (kill -9 included), so a lock is never stale; the file stays (removing it could let two writers
// lock two different files), and its presence marks a directory that normlab has written.
#pragma once
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

namespace normlab {

inline constexpr const char* kLockFile = ".normlab.lock";

class DirectoryLock {
 public:
  // Takes the lock (creating the file) or throws
  //   "[op] 'DIR' is in use: another normlab process (pid N) is writing it; ..."
  DirectoryLock(const std::filesystem::path& dir, const std::string& op);
  ~DirectoryLock();
  DirectoryLock(DirectoryLock&& other) noexcept;
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  DirectoryLock& operator=(DirectoryLock&&) = delete;

  // The pid of the process holding dir's lock (0 if it has not written its pid yet); nullopt
  // when nobody holds it. A lock held by this process through another DirectoryLock counts.
  static std::optional<pid_t> holder(const std::filesystem::path& dir);

 private:
  int fd_ = -1;
};

}  // namespace normlab
