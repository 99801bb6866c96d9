// The name tables between Hugging Face checkpoints and normlab parameters, one per model family
// (docs/hf_interop.md shows them as tables). A rule maps one HF tensor to one normlab parameter,
// or to three (GPT's fused c_attn), with the layout change between them:
//   same       identical (nn.Linear stores (out, in), as normlab's Linear)
//   conv1d     GPT's Conv1D stores (in, out): transposed
//   conv1d_qkv GPT's c_attn weight (C, 3C): transposed to (3C, C), rows split into q, k, v
//   split3     GPT's c_attn bias (3C,): split into the q, k, v biases
// A new family is one more table in hf_names.cpp; patterns expand {L} per layer and {E} per expert.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "nn/model_config.h"

namespace normlab {

enum class HfLayout { same, conv1d, conv1d_qkv, split3 };

struct HfTensorRule {
  std::string hf;                   // "model.layers.0.self_attn.q_proj.weight"
  std::vector<std::string> normlab; // "blocks.0.attn.q.weight" (three names for the fused layouts)
  HfLayout layout = HfLayout::same;
};

// The families normlab reads and writes, by Hugging Face model_type: "openai-gpt", "gpt2", "llama",
// "mistral", "gemma", "mixtral".
const std::vector<std::string>& hf_model_types();
// The HF class name written in config.json "architectures" ("LlamaForCausalLM", ...).
std::string hf_architecture(const std::string& model_type);

// Every rule of the family for n_layers layers, including tensors the config may not have (biases,
// final norm, lm_head); the caller keeps those whose normlab names the model has. n_experts: the
// experts per layer (Mixtral's num_local_experts; the other families ignore it).
std::vector<HfTensorRule> hf_tensor_rules(const std::string& model_type, int64_t n_layers, int64_t n_experts = 0);

// Layout changes (host tensors; the dtype is kept).
Tensor hf_tensor_from_parts(HfLayout layout, const std::vector<Tensor>& parts);
std::vector<Tensor> parts_from_hf_tensor(HfLayout layout, const Tensor& hf);
// The HF tensor's shape for normlab parts of these shapes.
Shape hf_shape(HfLayout layout, const std::vector<Shape>& part_shapes);

}  // namespace normlab
