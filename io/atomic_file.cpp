#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/error.h"
#include "io/fault_injection.h"

namespace fs = std::filesystem;

namespace normlab {
namespace {

constexpr size_t kBufferBytes = size_t(1) << 20;
constexpr const char* kTempInfix = ".tmp.";
constexpr size_t kTempSuffixLength = 6;  // mkstemp's XXXXXX

bool is_temporary_name(const std::string& name) {
  const size_t infix = name.rfind(kTempInfix);
  return infix != std::string::npos && infix > 0 &&
         name.size() == infix + std::strlen(kTempInfix) + kTempSuffixLength;
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  std::string pattern = path_ + kTempInfix + "XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  fd_ = inject_fault("create", pattern) ? -1 : ::mkstemp(name.data());
  NL_CHECK(fd_ >= 0, "atomic_file", "cannot create a temporary file next to '{}': {}", path_,
           std::strerror(errno));
  temp_path_ = name.data();
  ::fchmod(fd_, 0644);  // mkstemp makes 0600; results are meant to be shared
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_path_.c_str());
}

void AtomicFile::write(const void* data, size_t bytes) {
  NL_CHECK(fd_ >= 0 && !committed_, "atomic_file", "write to '{}' after commit", path_);
  digest_.bytes += bytes;
  digest_.crc32 = crc32_update(digest_.crc32, data, bytes);
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const size_t take = std::min(bytes, kBufferBytes - buffer_.size());
    buffer_.append(p, take);
    p += take;
    bytes -= take;
    if (buffer_.size() == kBufferBytes) flush();
  }
}

void AtomicFile::flush() {
  if (buffer_.empty()) return;
  NL_CHECK(!inject_fault("write", temp_path_), "atomic_file", "writing '{}' failed: {}", temp_path_,
           std::strerror(errno));
  const char* p = buffer_.data();
  size_t left = buffer_.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    NL_CHECK(n > 0, "atomic_file", "writing '{}' failed: {}", temp_path_, std::strerror(errno));
    p += n;
    left -= static_cast<size_t>(n);
  }
  buffer_.clear();
}

FileDigest AtomicFile::commit() {
  NL_CHECK(fd_ >= 0 && !committed_, "atomic_file", "'{}' committed twice", path_);
  flush();
  NL_CHECK(!inject_fault("fsync", temp_path_) && ::fsync(fd_) == 0, "atomic_file",
           "fsync of '{}' failed: {}", temp_path_, std::strerror(errno));
  const int closed = ::close(fd_);
  fd_ = -1;
  NL_CHECK(closed == 0, "atomic_file", "closing '{}' failed: {}", temp_path_, std::strerror(errno));
  NL_CHECK(!inject_fault("rename", path_) && ::rename(temp_path_.c_str(), path_.c_str()) == 0,
           "atomic_file", "renaming '{}' to '{}' failed: {}", temp_path_, path_, std::strerror(errno));
  committed_ = true;
  const fs::path parent = fs::path(path_).parent_path();
  sync_directory(parent.empty() ? std::string(".") : parent.string());
  return digest_;
}

FileDigest write_file_atomic(const std::string& path, const std::string& text) {
  AtomicFile file(path);
  file.write(text);
  return file.commit();
}

void sync_directory(const std::string& dir) {
  NL_CHECK(!inject_fault("fsync", dir), "atomic_file", "fsync of directory '{}' failed: {}", dir,
           std::strerror(errno));
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  NL_CHECK(fd >= 0, "atomic_file", "cannot open directory '{}' to fsync it: {}", dir, std::strerror(errno));
  const int synced = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  // EINVAL: a file system that cannot sync directories (its renames are then as durable as it gets).
  NL_CHECK(synced == 0 || error == EINVAL, "atomic_file", "fsync of directory '{}' failed: {}", dir,
           std::strerror(error));
}

void remove_stale_temporaries(const std::string& dir) {
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    if (entry.is_directory() && !entry.is_symlink()) continue;
    if (is_temporary_name(entry.path().filename().string())) fs::remove(entry.path(), error);
  }
}

}  // namespace normlab
