// Shared by the libFuzzer targets: the input written to a file (the readers under test take a
// path), and the rule every target checks: bad input may only end in normlab::Error.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace normlab::fuzz {

// A file of this process's own in /dev/shm (or $TMPDIR, /tmp), so that parallel fuzzers
// (-jobs=N) do not share one; `tag` tells the targets' files apart.
inline std::string scratch_path(const std::string& tag) {
  std::string dir = "/dev/shm";
  if (access(dir.c_str(), W_OK) != 0) dir = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
  return dir + "/normlab-fuzz-" + std::to_string(getpid()) + "-" + tag;
}

inline void write_file(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
}

// A property of a successful read failed: report it and abort, so that libFuzzer saves the input.
[[noreturn]] inline void property_failed(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz property failed: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace normlab::fuzz
