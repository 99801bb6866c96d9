// Reading a whole file: the one helper every layer uses (data files, configs, checkpoints, logs).
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

namespace normlab {

// The whole content of a file, byte for byte; throws "[op] <path>: cannot open file" (or
// "reading failed") when it cannot be read.
std::string read_whole_file(const std::filesystem::path& path, std::string_view op);

}  // namespace normlab
