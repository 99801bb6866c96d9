// read_whole_file (core/files.h): every byte back (NUL, CR, no trailing newline), and a missing file
// is an error naming the op and the path.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/files.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;

TEST(ReadWholeFile, ReturnsEveryByte) {
  const fs::path path = fs::temp_directory_path() / ("normlab-files-test-" + std::to_string(::getpid()));
  std::string bytes = "line\r\n";
  bytes += '\0';
  bytes += "\xFF end";
  for (int i = 0; i < 5000; ++i) bytes += static_cast<char>(i % 251);  // larger than one buffer read
  std::ofstream(path, std::ios::binary) << bytes;
  EXPECT_EQ(read_whole_file(path, "test"), bytes);
  std::ofstream(path, std::ios::binary | std::ios::trunc).flush();
  EXPECT_EQ(read_whole_file(path, "test"), "");
  fs::remove(path);
}

TEST(ReadWholeFile, AMissingFileNamesTheOpAndThePath) {
  try {
    read_whole_file("/nonexistent/normlab.txt", "data");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "[data] /nonexistent/normlab.txt: cannot open file");
  }
}

}  // namespace
}  // namespace normlab
