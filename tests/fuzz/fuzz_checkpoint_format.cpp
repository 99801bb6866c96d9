// libFuzzer target: the checkpoint readers of train/checkpoint_format.h on arbitrary bytes.
//   input = <selector byte> <file text>; an even selector feeds parse_manifest (manifest.json),
//   an odd one parse_trainer_state (trainer_state.json)
// Every input must end in a parsed value or a normlab::Error; any other exception, a crash, a
// sanitizer report or a hang is a finding. A value that parses is written back and parsed again,
// and must come out equal (the writer and the reader agree on the format).
// Build: with -DNORMLAB_FUZZ=ON (tests/fuzz/CMakeLists.txt); seeds: the manifest.json and
// trainer_state.json of any run's checkpoint, each prefixed with its selector byte.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "train/checkpoint_format.h"

namespace {

[[noreturn]] void round_trip_failed(const std::string& first, const std::string& second) {
  std::fprintf(stderr, "fuzz property failed: round trip changed\n%s\n---\n%s\n", first.c_str(), second.c_str());
  std::abort();
}

void check_manifest(const std::string& text) {
  const normlab::CheckpointManifest m = normlab::parse_manifest(text, "manifest.json");
  const std::string written = normlab::manifest_to_json(m);
  const normlab::CheckpointManifest again = normlab::parse_manifest(written, "rewritten manifest.json");
  bool same = again.step == m.step && again.files.size() == m.files.size();
  for (const auto& [name, digest] : m.files) {
    const auto it = again.files.find(name);
    same = same && it != again.files.end() && it->second.bytes == digest.bytes && it->second.crc32 == digest.crc32;
  }
  if (!same) round_trip_failed(text, written);
}

void check_trainer_state(const std::string& text) {
  const normlab::TrainerState s = normlab::parse_trainer_state(text, "trainer_state.json");
  const std::string written = normlab::trainer_state_to_json(s);
  const normlab::TrainerState again = normlab::parse_trainer_state(written, "rewritten trainer_state.json");
  if (again.step != s.step || again.data_generator != s.data_generator) round_trip_failed(text, written);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (data[0] % 2 == 0) check_manifest(text);
    else check_trainer_state(text);
  } catch (const normlab::Error&) {
    // bad input, reported as it should be
  }
  return 0;
}
