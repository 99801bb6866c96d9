// libFuzzer target: Hugging Face's config.json as hf/hf_checkpoint.h's hf_model_config reads it
// (`normlab hf import`), on arbitrary bytes (the whole input is the file's text). A config that
// reads is written back with hf_config_json and must read to the same model config and type.
// Every input must end in a ModelConfig or a normlab::Error.
#include <string>

#include "config/config.h"
#include "core/error.h"
#include "fuzz_util.h"
#include "hf/hf_checkpoint.h"

namespace {

using namespace normlab;

// The model section of a config, as text: equal texts, equal models (head_dim 0 means
// d_model / n_heads, which hf_config_json writes out).
std::string text_of(const ModelConfig& model) {
  RunConfig c;
  c.model = model;
  if (c.model.head_dim == 0 && c.model.n_heads > 0) c.model.head_dim = c.model.d_model / c.model.n_heads;
  return config_to_toml(c);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::scratch_path("config.json");
  fuzz::write_file(path, data, size);
  std::string type;
  ModelConfig config;
  try {
    config = hf_model_config(path, ParamDType::Float32, &type);
  } catch (const Error&) {
    return 0;
  }
  const std::string again = hf_config_json(type, config);
  const std::string copy = fuzz::scratch_path("config-again.json");
  fuzz::write_file(copy, reinterpret_cast<const uint8_t*>(again.data()), again.size());
  std::string type_again;
  const ModelConfig back = hf_model_config(copy, ParamDType::Float32, &type_again);
  if (type_again != type || text_of(back) != text_of(config))
    fuzz::property_failed("hf_config_json of a config read does not read back the same",
                          std::string(reinterpret_cast<const char*>(data), size) + "\n--- written:\n" + again +
                              "\n--- read first:\n" + text_of(config) + "\n--- read back:\n" + text_of(back));
  return 0;
}
