#include "core/files.h"

#include <fstream>
#include <sstream>

#include "core/error.h"

namespace normlab {

std::string read_whole_file(const std::filesystem::path& path, std::string_view op) {
  std::ifstream in(path, std::ios::binary);
  NL_CHECK(in.good(), op, "{}: cannot open file", path.string());
  std::stringstream buffer;
  buffer << in.rdbuf();
  NL_CHECK(!in.bad(), op, "{}: reading failed", path.string());
  return buffer.str();
}

}  // namespace normlab
