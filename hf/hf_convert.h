// `normlab convert`: a Hugging Face checkpoint directory to a normlab run directory and back.
//   HF -> run:  RUN_DIR/config.toml (the model's [model] keys, no preset) and a checkpoint at step 0
//               holding the weights (train/checkpoint.h); `normlab sample` and training
//               resume read it as any run.
//   run -> HF:  HF_DIR/config.json + HF_DIR/model.safetensors of the family given, or else the
//               family of the run's preset, or else the first family whose structure the model has.
#pragma once
#include <string>

#include "nn/model_config.h"

namespace normlab {

// Returns the model_type read.
std::string convert_hf_to_run(const std::string& hf_dir, const std::string& run_dir, ParamDType dtype);
// Returns the model_type written.
std::string convert_run_to_hf(const std::string& run_dir, const std::string& hf_dir, std::string model_type);

}  // namespace normlab
