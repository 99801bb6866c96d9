// Files that appear whole or not at all: data goes to a temporary file "<path>.tmp.XXXXXX" in the
// same directory, which is fsync'ed and renamed over the target (rename is atomic on POSIX file
// systems), then the directory is fsync'ed. A crash leaves the old file (or none), never half a
// file; the temporary it may leave behind is removed by remove_stale_temporaries().
// Every file-system step is a fault point (io/fault_injection.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/digest.h"  // FileDigest: what commit() wrote

namespace normlab {


class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  // creates "<path>.tmp.XXXXXX"; throws naming the path
  ~AtomicFile();                          // removes the temporary file unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t bytes);  // buffered; throws naming the file (ENOSPC, ...)
  void write(const std::string& text) { write(text.data(), text.size()); }
  FileDigest commit();  // flush, fsync, close, rename over the target, fsync the directory

 private:
  void flush();
  std::string path_, temp_path_;
  int fd_ = -1;
  bool committed_ = false;
  std::string buffer_;  // fewer, larger writes: checkpoints hold many small tensors
  FileDigest digest_;
};

// Writes `text` to `path` atomically.
FileDigest write_file_atomic(const std::string& path, const std::string& text);

// fsync of a directory, so that the names created, renamed or removed in it are durable.
void sync_directory(const std::string& dir);

// Removes the temporary files ("<name>.tmp.XXXXXX") an interrupted writer left in `dir`.
// Call only while no other process writes there (one writer per run directory).
void remove_stale_temporaries(const std::string& dir);

}  // namespace normlab
