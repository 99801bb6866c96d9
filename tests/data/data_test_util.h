// Helpers shared by the data tests: an error's message, and a temporary file.
#pragma once
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "core/error.h"

namespace normlab::test {

// The message of the normlab::Error that f throws, or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A file under the system temp dir holding `contents`, removed when it goes out of scope.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& contents)
      : path_(std::filesystem::temp_directory_path() / ("normlab_data_test_" + name)) {
    std::ofstream(path_, std::ios::binary) << contents;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace normlab::test
