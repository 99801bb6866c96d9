#include "core/build_info.h"

#include <dlfcn.h>

#include <ctime>
#include <filesystem>
#include <fstream>

namespace normlab {

const char* build_commit() { return NORMLAB_GIT_COMMIT; }

std::string code_file() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&code_file), &info) != 0 && info.dli_fname != nullptr && info.dli_fname[0] == '/')
    return info.dli_fname;
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string() : exe.string();
}

namespace {
// The first line of /proc/cpuinfo that starts with `key` ("" where there is none).
std::string cpuinfo_line(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with(key)) return line;
  return "";
}
}  // namespace

std::string cpu_model_name() {
  const std::string line = cpuinfo_line("model name");
  const size_t colon = line.find(':');
  if (colon == std::string::npos) return "";
  const size_t start = line.find_first_not_of(" \t", colon + 1);
  return start == std::string::npos ? "" : line.substr(start);
}

std::string cpu_identity() { return cpuinfo_line("model name") + "\n" + cpuinfo_line("flags"); }

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace normlab
