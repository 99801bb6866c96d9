#include "hf/hf_convert.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "io/atomic_file.h"
#include "train/checkpoint.h"
#include "config/config.h"
#include "hf/hf_checkpoint.h"
#include "hf/hf_names.h"
#include "train/run_dir.h"

namespace normlab {

namespace fs = std::filesystem;

std::string convert_hf_to_run(const std::string& hf_dir, const std::string& run_dir, ParamDType dtype) {
  NL_CHECK(!fs::exists(fs::path(run_dir) / run_files::kConfig), "convert",
           "{} already holds a run (config.toml); choose a new directory", run_dir);
  const HfCheckpoint checkpoint = read_hf_checkpoint(hf_dir, dtype);
  RunConfig rc;
  rc.model = checkpoint.config;
  rc.train.context = std::min(rc.train.context, rc.model.context_length);
  rc.train.name = fs::path(run_dir).filename().string();
  TransformerLM model(rc.model);
  load_hf_weights(model, checkpoint);
  fs::create_directories(run_dir);
  write_file_atomic((fs::path(run_dir) / run_files::kConfig).string(), config_to_toml(rc));
  const auto optimizer = make_optimizer(rc.optim, model.named_parameters());
  save_checkpoint(run_dir, model, *optimizer, Generator(rc.train.seed), 0);
  return checkpoint.model_type;
}

std::string convert_run_to_hf(const std::string& run_dir, const std::string& hf_dir, std::string model_type) {
  const RunConfig rc = load_config((fs::path(run_dir) / run_files::kConfig).string());
  NL_CHECK(rc.model.arch == ModelArch::Decoder, "convert",
           "{}: model.arch = \"{}\"; the Hugging Face families here are decoders, which would read its "
           "weights as a causal model",
           run_dir, rc.model.arch);
  TransformerLM model(rc.model);
  load_model_weights(run_dir, model);
  if (model_type.empty()) model_type = hf_model_type_of_preset(rc.preset);
  if (model_type.empty()) {
    for (const std::string& type : hf_model_types()) {
      try {
        hf_config_json(type, rc.model);
        model_type = type;
        break;
      } catch (const Error&) {
        // not this family
      }
    }
    NL_CHECK(!model_type.empty(), "convert",
             "{}: no Hugging Face family ({}) has this model's structure; pass --model-type to see why",
             run_dir, fmt::join(hf_model_types(), ", "));
  }
  write_hf_checkpoint(hf_dir, model_type, model);
  return model_type;
}

}  // namespace normlab
