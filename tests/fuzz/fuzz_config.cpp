// libFuzzer target: the config reader (config/config.h) on arbitrary bytes, as a TOML file
// plus command-line overrides:
//   input = <file text> [ '\0' <override> '\n' <override> ... ]
// Every input must end in a RunConfig or a normlab::Error; any other exception, a crash, a
// sanitizer report or a hang is a finding. A config that reads is written with config_to_toml and
// read again, and must give the same text (run directories store their config that way).
#include <string>
#include <vector>

#include "core/error.h"
#include "config/config.h"
#include "fuzz_util.h"

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find('\n', begin), text.size());
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace normlab;
  static const std::string path = fuzz::scratch_path("config.toml");
  static const std::string rewritten = fuzz::scratch_path("rewritten.toml");
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  fuzz::write_file(path, data, nul == std::string::npos ? size : nul);
  const std::vector<std::string> overrides =
      nul == std::string::npos ? std::vector<std::string>{} : split_lines(input.substr(nul + 1));

  RunConfig config;
  std::string text;
  try {
    config = load_config(path, overrides);
    text = config_to_toml(config);  // throws for values TOML cannot hold (a seed >= 2^63)
  } catch (const Error&) {
    return 0;
  }
  fuzz::write_file(rewritten, reinterpret_cast<const uint8_t*>(text.data()), text.size());
  try {
    const std::string again = config_to_toml(load_config(rewritten));
    if (again != text) fuzz::property_failed("config_to_toml is not a fixed point", text + "\n---\n" + again);
  } catch (const Error& e) {
    fuzz::property_failed("load_config rejects what config_to_toml wrote", text + "\n---\n" + e.what());
  }
  return 0;
}
