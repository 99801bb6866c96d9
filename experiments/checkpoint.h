// Checkpoints of a run, in RUN_DIR/checkpoint/:
//   model.safetensors      every parameter and buffer by its dotted name
//   optimizer.safetensors  the optimizer state ("m.<name>", "v.<name>", ...), step count in metadata
//   trainer_state.json     step, data generator state (so the data stream resumes exactly)
// Each file is written atomically (temp file + rename); trainer_state.json is written last, so a
// checkpoint is complete exactly when its trainer_state.json names its step.
#pragma once
#include <cstdint>
#include <string>

#include "core/random.h"
#include "nn/transformer.h"
#include "optim/optimizer.h"

namespace normlab {

void save_checkpoint(const std::string& run_dir, const TransformerLM& model, const Optimizer& optimizer,
                     const Generator& data_gen, int64_t step);
// Restores model, optimizer and generator; returns the step to continue from.
int64_t load_checkpoint(const std::string& run_dir, TransformerLM& model, Optimizer& optimizer,
                        Generator& data_gen);
// Loads only the model's parameters (sampling, evaluation).
void load_model_weights(const std::string& run_dir, TransformerLM& model);

}  // namespace normlab
