// Hugging Face checkpoint directories (config.json + model.safetensors, as save_pretrained writes
// them) of GPT-1 (OpenAIGPTLMHeadModel), GPT-2, Llama, Mistral, Gemma and Mixtral, read into a normlab
// ModelConfig and weights and written back. Names and layouts: hf/hf_names.h and
// docs/hf_interop.md. Every problem throws "[hf] <file>: ..." naming the file and the key or tensor.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "nn/model_config.h"
#include "nn/transformer.h"

namespace normlab {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

struct HfCheckpoint {
  std::string model_type;  // "openai-gpt", "gpt2", "llama", "mistral", "gemma", "mixtral"
  ModelConfig config;      // the family's structure and sizes, dropout 0
  NamedTensors weights;    // by normlab parameter name, in config.dtype
};

// config.json alone -> ModelConfig with `dtype`, and its model_type.
ModelConfig hf_model_config(const std::string& config_json_path, ParamDType dtype,
                            std::string* model_type = nullptr);
// The whole directory: config, and every tensor checked (none missing, none unexpected, shapes).
HfCheckpoint read_hf_checkpoint(const std::string& dir, ParamDType dtype = ParamDType::Float32);
// Copies the checkpoint's weights into a model built from checkpoint.config.
void load_hf_weights(TransformerLM& model, const HfCheckpoint& checkpoint);

// normlab-named tensors (a model's parameters, or their gradients) as Hugging Face names and
// layouts; a tied head appears once, as the embedding (its gradient already holds both uses).
NamedTensors to_hf_tensors(const std::string& model_type, const ModelConfig& config, const NamedTensors& named);
// The config.json text for a model of this family; throws naming the first [model] key that the
// family cannot express (e.g. layernorm for llama).
std::string hf_config_json(const std::string& model_type, const ModelConfig& config);
// Writes dir/config.json and dir/model.safetensors (float32, or the model's dtype).
void write_hf_checkpoint(const std::string& dir, const std::string& model_type, const TransformerLM& model);
// The model_type that a normlab preset corresponds to ("gpt1" -> "openai-gpt", ...); "" when none.
std::string hf_model_type_of_preset(const std::string& preset);

}  // namespace normlab
