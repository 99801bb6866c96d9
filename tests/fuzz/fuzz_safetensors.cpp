// libFuzzer target: the safetensors reader (io/safetensors.h) on arbitrary bytes.
// Every input must end in a SafetensorsFile or a normlab::Error; any other exception, a crash, a
// sanitizer report or a hang is a finding. A file that reads is written with save_safetensors
// and read again: the same names in the same order, metadata, dtypes, shapes and bytes.
#include <cstring>
#include <string>

#include "core/error.h"
#include "io/safetensors.h"
#include "fuzz_util.h"

namespace {

using normlab::SafetensorsFile;

// "" when a and b hold the same tensors and metadata, else what differs.
std::string difference(const SafetensorsFile& a, const SafetensorsFile& b) {
  if (a.names != b.names) return "tensor names or their order";
  if (a.metadata != b.metadata) return "metadata";
  for (const std::string& name : a.names) {
    const normlab::Tensor &x = a.get(name), &y = b.get(name);
    if (x.dtype() != y.dtype() || x.shape() != y.shape()) return "dtype or shape of '" + name + "'";
    if (x.nbytes() > 0 && std::memcmp(x.raw_data(), y.raw_data(), x.nbytes()) != 0)
      return "bytes of '" + name + "'";
  }
  return "";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace normlab;
  static const std::string path = fuzz::scratch_path("input.safetensors");
  static const std::string rewritten = fuzz::scratch_path("rewritten.safetensors");
  fuzz::write_file(path, data, size);
  SafetensorsFile file;
  try {
    file = load_safetensors(path);
  } catch (const Error&) {
    return 0;
  }
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const std::string& name : file.names) tensors.emplace_back(name, file.get(name));
  try {
    save_safetensors(rewritten, tensors, file.metadata);
    const std::string differs = difference(file, load_safetensors(rewritten));
    if (!differs.empty()) fuzz::property_failed("a file read and written back differs in", differs);
  } catch (const Error& e) {
    fuzz::property_failed("save or load rejects what load_safetensors read", e.what());
  }
  return 0;
}
