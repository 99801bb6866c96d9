// Helpers for tests that damage a run's checkpoint on purpose: flip a bit, rewrite a file, and
// (to reach the checks behind the checksum) re-seal the manifest as a writer would have.
#pragma once
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "io/safetensors.h"

namespace normlab::test {

namespace fs = std::filesystem;

inline fs::path checkpoint_file(const fs::path& run, const std::string& name) {
  return run / "checkpoint" / name;
}

inline std::string file_bytes(const fs::path& path) { return read_whole_file(path, "test"); }

inline void put_file_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Updates manifest.json's entry for `name` to the file's present size and CRC-32, when the
// checkpoint has a manifest: the damage then has to be caught by the checks behind the checksum.
inline void reseal(const fs::path& run, const std::string& name) {
  const fs::path manifest_path = checkpoint_file(run, "manifest.json");
  if (!fs::exists(manifest_path)) return;
  const std::string bytes = file_bytes(checkpoint_file(run, name));
  const uLong crc = ::crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size()));
  nlohmann::json manifest = nlohmann::json::parse(file_bytes(manifest_path));
  manifest["files"][name] = {{"bytes", bytes.size()}, {"crc32", fmt::format("{:08x}", crc)}};
  put_file_bytes(manifest_path, manifest.dump(2));
}

// Flips one bit of the checkpoint file `name`, `from_end` bytes before its end (inside the data).
inline void flip_bit(const fs::path& run, const std::string& name, size_t from_end = 9) {
  std::string bytes = file_bytes(checkpoint_file(run, name));
  bytes[bytes.size() - from_end] ^= 0x10;
  put_file_bytes(checkpoint_file(run, name), bytes);
}

// Rewrites the safetensors file `name` after `edit` changed its tensors (metadata kept), and reseals.
inline void rewrite_tensors(const fs::path& run, const std::string& name,
                            const std::function<void(std::vector<std::pair<std::string, Tensor>>&)>& edit) {
  const SafetensorsFile file = load_safetensors(checkpoint_file(run, name).string());
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const std::string& n : file.names) tensors.emplace_back(n, file.tensors.at(n));
  edit(tensors);
  save_safetensors(checkpoint_file(run, name).string(), tensors, file.metadata);
  reseal(run, name);
}

// Rewrites trainer_state.json after `edit` changed it, and reseals.
inline void rewrite_trainer_state(const fs::path& run, const std::function<void(nlohmann::json&)>& edit) {
  const fs::path path = checkpoint_file(run, "trainer_state.json");
  nlohmann::json state = nlohmann::json::parse(file_bytes(path));
  edit(state);
  put_file_bytes(path, state.dump(2));
  reseal(run, "trainer_state.json");
}

}  // namespace normlab::test
