// Files of segments, one per line (see segment_file.h).
#include "data/segment_file.h"

#include <filesystem>

#include "core/error.h"
#include "core/files.h"
#include "data/utf8.h"

namespace normlab {

std::vector<std::string> split_segments(const std::string& text, const std::string& name, const char* op) {
  std::vector<std::string> segments;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    segments.push_back(text.substr(start, end - start));
    const int64_t bad = utf8::first_invalid(segments.back());
    NL_CHECK(bad < 0, op, "{}:{}: not valid UTF-8 (bad byte 0x{:02X} at byte {} of the line)", name, segments.size(),
             static_cast<unsigned char>(segments.back()[static_cast<size_t>(bad)]), bad + 1);
    start = end + 1;
  }
  return segments;
}

std::vector<std::string> read_segment_file(const std::string& path, const char* op) {
  NL_CHECK(!std::filesystem::is_directory(path), op, "{}: cannot open file (it is a directory)", path);
  return split_segments(read_whole_file(path, op), path, op);
}

}  // namespace normlab
