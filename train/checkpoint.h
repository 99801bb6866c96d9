// Checkpoints of a run: each one is a complete generation in a directory of its own, and one
// symbolic link names the current one:
//   RUN_DIR/checkpoint -> checkpoints/step-00000012.Ab3xYz
//   RUN_DIR/checkpoints/step-00000012.Ab3xYz/
//     model.safetensors      every parameter and buffer by its dotted name, the step in metadata
//     optimizer.safetensors  the optimizer state ("m.<name>", "v.<name>", ...), step counts in metadata
//     trainer_state.json     step, data generator state (so the data stream resumes exactly)
//     manifest.json          step, format version, each file's size and CRC-32 (checkpoint_format.h)
// Saving writes a new generation directory (every file fsync'ed, the manifest last, the directory
// fsync'ed), then switches the link with one rename(2) and only then removes the previous
// generation. A kill or a full disk at any moment leaves the link naming one complete generation
// (or no link before the first checkpoint); anything else under checkpoints/ is a leftover that
// remove_stale_checkpoint_files() deletes.
#pragma once
#include <cstdint>
#include <string>

#include "core/random.h"
#include "nn/transformer.h"
#include "optim/loss_scaler.h"
#include "optim/optimizer.h"

namespace normlab {

// Throws "[checkpoint] step N was not saved (...)" on any failure (ENOSPC, ...), leaving the
// previous generation current and no new files behind.
// loss_scaler (fp16 runs) is saved in trainer_state.json too when given.
void save_checkpoint(const std::string& run_dir, const TransformerLM& model, const Optimizer& optimizer,
                     const Generator& data_gen, int64_t step, const LossScaler* loss_scaler = nullptr);
// Restores model, optimizer and generator; returns the step to continue from. Everything is
// checked before anything is changed: each file's size and CRC-32 against the manifest, the step in
// every file, every tensor's dtype and shape, no tensor missing or unexpected, a valid generator
// state. On any mismatch it throws naming the file, and model, optimizer and generator are untouched.
int64_t load_checkpoint(const std::string& run_dir, TransformerLM& model, Optimizer& optimizer,
                        Generator& data_gen, LossScaler* loss_scaler = nullptr);
// Loads only the model's parameters and buffers (sampling, evaluation), with the same checks.
void load_model_weights(const std::string& run_dir, TransformerLM& model);
// Whether the run directory has a checkpoint link (not whether it is valid).
bool has_checkpoint(const std::string& run_dir);
// The cadence of checkpoints during training: after `steps_done` updates when train.checkpoint_every
// (`every`, 0 = none) divides it, or when `seconds_since_last` (wall time since the last checkpoint,
// or since the run started) reached `max_seconds`. The trainer's default max_seconds is 600, so a
// kill -9 loses at most about ten minutes of training whatever checkpoint_every says.
bool checkpoint_due(int64_t steps_done, int64_t every, double seconds_since_last, double max_seconds);
// Deletes what interrupted writers left: generations other than the current one, temporary files
// and links ("*.tmp.XXXXXX") in the run directory. Only while no other process writes the run.
void remove_stale_checkpoint_files(const std::string& run_dir);

}  // namespace normlab
