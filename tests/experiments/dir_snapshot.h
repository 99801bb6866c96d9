// Whole-file reads and directory snapshots, to assert that a refused writer changed nothing.
#pragma once
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "experiments/directory_lock.h"

namespace normlab::test {

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Every regular file under dir (the lock file aside: it holds the last writer's pid) with its bytes.
inline std::map<std::string, std::string> snapshot(const std::filesystem::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().filename() != kLockFile)
      files[std::filesystem::relative(entry.path(), dir).string()] = read_text(entry.path());
  return files;
}

}  // namespace normlab::test
