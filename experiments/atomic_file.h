// Files that appear whole or not at all: data goes to a temporary file in the same directory,
// which is fsync'ed and renamed over the target (rename is atomic on POSIX file systems), then the
// directory is fsync'ed. A crash leaves the old file (or none), never half a file.
#pragma once
#include <cstddef>
#include <string>

namespace normlab {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  // creates "<path>.tmp.XXXXXX"; throws naming the path
  ~AtomicFile();                          // removes the temporary file unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t bytes);
  void write(const std::string& text) { write(text.data(), text.size()); }
  void commit();  // fsync, close, rename over the target, fsync the directory

 private:
  std::string path_, temp_path_;
  int fd_ = -1;
  bool committed_ = false;
};

// Writes `text` to `path` atomically.
void write_file_atomic(const std::string& path, const std::string& text);

}  // namespace normlab
