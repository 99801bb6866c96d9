#include "experiments/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/error.h"

namespace normlab {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  std::string pattern = path_ + ".tmp.XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  fd_ = ::mkstemp(buffer.data());
  NL_CHECK(fd_ >= 0, "atomic_file", "cannot create a temporary file next to '{}': {}", path_,
           std::strerror(errno));
  temp_path_ = buffer.data();
  ::fchmod(fd_, 0644);  // mkstemp makes 0600; results are meant to be shared
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_path_.c_str());
}

void AtomicFile::write(const void* data, size_t bytes) {
  NL_CHECK(fd_ >= 0 && !committed_, "atomic_file", "write to '{}' after commit", path_);
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    NL_CHECK(n > 0, "atomic_file", "writing '{}' failed: {}", temp_path_, std::strerror(errno));
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

void AtomicFile::commit() {
  NL_CHECK(fd_ >= 0 && !committed_, "atomic_file", "'{}' committed twice", path_);
  NL_CHECK(::fsync(fd_) == 0, "atomic_file", "fsync of '{}' failed: {}", temp_path_,
           std::strerror(errno));
  const int closed = ::close(fd_);
  fd_ = -1;
  NL_CHECK(closed == 0, "atomic_file", "closing '{}' failed: {}", temp_path_, std::strerror(errno));
  NL_CHECK(::rename(temp_path_.c_str(), path_.c_str()) == 0, "atomic_file",
           "renaming '{}' to '{}' failed: {}", temp_path_, path_, std::strerror(errno));
  committed_ = true;
  // Make the rename itself durable (best effort: some file systems refuse to open directories).
  const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  const std::string dir = parent.empty() ? std::string(".") : parent.string();
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

void write_file_atomic(const std::string& path, const std::string& text) {
  AtomicFile file(path);
  file.write(text);
  file.commit();
}

}  // namespace normlab
