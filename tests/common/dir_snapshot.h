// Whole-file reads and directory snapshots, to assert that a refused writer changed nothing.
#pragma once
#include <filesystem>
#include <map>
#include <string>

#include "core/files.h"
#include "io/directory_lock.h"

namespace normlab::test {

inline std::string read_text(const std::filesystem::path& path) { return read_whole_file(path, "test"); }

// Every regular file under dir (the lock file aside: it holds the last writer's pid) with its bytes.
inline std::map<std::string, std::string> snapshot(const std::filesystem::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().filename() != kLockFile)
      files[std::filesystem::relative(entry.path(), dir).string()] = read_text(entry.path());
  return files;
}

}  // namespace normlab::test
