// The two JSON files of a checkpoint generation (train/checkpoint.h), written and parsed.
// Parsing is strict and never trusts its input: anything malformed throws
// "[checkpoint] <path>: <what is wrong>" (fuzzed by tests/fuzz/fuzz_checkpoint_format.cpp).
//
// manifest.json, written last, lists every other file of the generation with its size and CRC-32:
//   {"format": "normlab checkpoint", "version": 1, "step": 12,
//    "files": {"model.safetensors": {"bytes": 1234, "crc32": "89abcdef"},
//              "optimizer.safetensors": {...}, "trainer_state.json": {...}}}
// trainer_state.json: {"step": 12, "data_generator": [six unsigned 64-bit numbers]} (the data
// generator's state, core/random.h; it may not be all zero).
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "io/atomic_file.h"
#include "optim/loss_scaler.h"

namespace normlab {

namespace checkpoint_files {
inline constexpr const char* kModel = "model.safetensors";
inline constexpr const char* kOptimizer = "optimizer.safetensors";
inline constexpr const char* kTrainerState = "trainer_state.json";
inline constexpr const char* kManifest = "manifest.json";
}  // namespace checkpoint_files

inline constexpr int kCheckpointVersion = 1;

struct CheckpointManifest {
  int64_t step = 0;
  std::map<std::string, FileDigest> files;  // exactly model, optimizer and trainer state
};
std::string manifest_to_json(const CheckpointManifest& manifest);
CheckpointManifest parse_manifest(const std::string& text, const std::string& path);

struct TrainerState {
  int64_t step = 0;
  std::array<uint64_t, 6> data_generator{};
  std::optional<LossScaleState> loss_scale;  // fp16 runs: the dynamic loss scale ("loss_scale")
};
std::string trainer_state_to_json(const TrainerState& state);
TrainerState parse_trainer_state(const std::string& text, const std::string& path);

// A step count stored as text (safetensors metadata): a decimal integer in [0, 2^53], else throws
// naming the file and the key.
int64_t parse_step_text(const std::string& text, const std::string& path, const std::string& key);

}  // namespace normlab
