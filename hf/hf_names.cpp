#include "hf/hf_names.h"

#include <fmt/format.h>

#include "core/error.h"

namespace normlab {

namespace {

struct LayerRule {
  const char* hf;       // with {L} for the layer index
  const char* normlab;  // with {L}; for fused rules the ".q." name, k and v follow by substitution
  HfLayout layout;
};

// GPT-1 and GPT-2 blocks share their names below "h.{L}." (Conv1D layers, fused q/k/v).
const std::vector<LayerRule>& gpt_layer_rules() {
  static const std::vector<LayerRule> rules = {
      {"transformer.h.{L}.ln_1.weight", "blocks.{L}.norm1.weight", HfLayout::same},
      {"transformer.h.{L}.ln_1.bias", "blocks.{L}.norm1.bias", HfLayout::same},
      {"transformer.h.{L}.attn.c_attn.weight", "blocks.{L}.attn.q.weight", HfLayout::conv1d_qkv},
      {"transformer.h.{L}.attn.c_attn.bias", "blocks.{L}.attn.q.bias", HfLayout::split3},
      {"transformer.h.{L}.attn.c_proj.weight", "blocks.{L}.attn.o.weight", HfLayout::conv1d},
      {"transformer.h.{L}.attn.c_proj.bias", "blocks.{L}.attn.o.bias", HfLayout::same},
      {"transformer.h.{L}.ln_2.weight", "blocks.{L}.norm2.weight", HfLayout::same},
      {"transformer.h.{L}.ln_2.bias", "blocks.{L}.norm2.bias", HfLayout::same},
      {"transformer.h.{L}.mlp.c_fc.weight", "blocks.{L}.ffn.w1.weight", HfLayout::conv1d},
      {"transformer.h.{L}.mlp.c_fc.bias", "blocks.{L}.ffn.w1.bias", HfLayout::same},
      {"transformer.h.{L}.mlp.c_proj.weight", "blocks.{L}.ffn.w2.weight", HfLayout::conv1d},
      {"transformer.h.{L}.mlp.c_proj.bias", "blocks.{L}.ffn.w2.bias", HfLayout::same},
  };
  return rules;
}

// Llama, Mistral, Gemma and Mixtral attention and norms (nn.Linear layers).
const std::vector<LayerRule>& llama_attention_rules() {
  static const std::vector<LayerRule> rules = {
      {"model.layers.{L}.input_layernorm.weight", "blocks.{L}.norm1.weight", HfLayout::same},
      {"model.layers.{L}.self_attn.q_proj.weight", "blocks.{L}.attn.q.weight", HfLayout::same},
      {"model.layers.{L}.self_attn.k_proj.weight", "blocks.{L}.attn.k.weight", HfLayout::same},
      {"model.layers.{L}.self_attn.v_proj.weight", "blocks.{L}.attn.v.weight", HfLayout::same},
      {"model.layers.{L}.self_attn.o_proj.weight", "blocks.{L}.attn.o.weight", HfLayout::same},
      {"model.layers.{L}.post_attention_layernorm.weight", "blocks.{L}.norm2.weight", HfLayout::same},
  };
  return rules;
}

// Llama, Mistral and Gemma's gated MLP: w1 = gate, w3 = up, w2 = down.
const std::vector<LayerRule>& llama_mlp_rules() {
  static const std::vector<LayerRule> rules = {
      {"model.layers.{L}.mlp.gate_proj.weight", "blocks.{L}.ffn.w1.weight", HfLayout::same},
      {"model.layers.{L}.mlp.up_proj.weight", "blocks.{L}.ffn.w3.weight", HfLayout::same},
      {"model.layers.{L}.mlp.down_proj.weight", "blocks.{L}.ffn.w2.weight", HfLayout::same},
  };
  return rules;
}

// Mixtral's sparse MoE block: the router, then each expert {E} (same w1/w2/w3 roles as above).
const std::vector<LayerRule>& mixtral_moe_rules() {
  static const std::vector<LayerRule> rules = {
      {"model.layers.{L}.block_sparse_moe.gate.weight", "blocks.{L}.ffn.router.weight", HfLayout::same},
      {"model.layers.{L}.block_sparse_moe.experts.{E}.w1.weight", "blocks.{L}.ffn.experts.{E}.w1.weight",
       HfLayout::same},
      {"model.layers.{L}.block_sparse_moe.experts.{E}.w2.weight", "blocks.{L}.ffn.experts.{E}.w2.weight",
       HfLayout::same},
      {"model.layers.{L}.block_sparse_moe.experts.{E}.w3.weight", "blocks.{L}.ffn.experts.{E}.w3.weight",
       HfLayout::same},
  };
  return rules;
}

std::vector<LayerRule> joined(std::vector<LayerRule> a, const std::vector<LayerRule>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Replaces `key` ("{L}" or "{E}") by the index, when the pattern has it.
std::string with_index(const std::string& pattern, const char* key, int64_t index) {
  std::string out = pattern;
  const size_t at = out.find(key);
  if (at != std::string::npos) out.replace(at, 3, std::to_string(index));
  return out;
}

// "blocks.0.attn.q.weight" -> the q, k and v names.
std::vector<std::string> fused_names(const std::string& q_name) {
  std::vector<std::string> names;
  for (const char* part : {".q.", ".k.", ".v."}) {
    std::string name = q_name;
    name.replace(name.find(".q."), 3, part);
    names.push_back(name);
  }
  return names;
}

// Every rule for layers 0 .. n_layers-1; a rule with {E} once per expert 0 .. n_experts-1.
void add_layers(std::vector<HfTensorRule>& out, const std::vector<LayerRule>& rules, int64_t n_layers,
                int64_t n_experts = 0) {
  for (int64_t l = 0; l < n_layers; ++l) {
    for (const LayerRule& r : rules) {
      const bool per_expert = std::string(r.hf).find("{E}") != std::string::npos;
      for (int64_t e = 0; e < (per_expert ? n_experts : 1); ++e) {
        const std::string hf = with_index(with_index(r.hf, "{L}", l), "{E}", e);
        const std::string normlab = with_index(with_index(r.normlab, "{L}", l), "{E}", e);
        const bool fused = r.layout == HfLayout::conv1d_qkv || r.layout == HfLayout::split3;
        out.push_back({hf, fused ? fused_names(normlab) : std::vector<std::string>{normlab}, r.layout});
      }
    }
  }
}

Tensor transposed(const Tensor& t) { return t.transpose(0, 1).contiguous(); }

// Parts stacked along axis 0 (1-d or 2-d host tensors with equal trailing sizes).
Tensor concat_rows(const std::vector<Tensor>& parts) {
  std::vector<double> values;
  int64_t rows = 0;
  for (const Tensor& p : parts) {
    const std::vector<double> v = p.to_vector();
    values.insert(values.end(), v.begin(), v.end());
    rows += p.size(0);
  }
  Shape shape = parts[0].shape();
  shape[0] = rows;
  return Tensor::from_vector(values, shape, parts[0].dtype());
}

std::vector<Tensor> split_rows(const Tensor& t, int64_t n) {
  NL_CHECK(t.size(0) % n == 0, "hf", "cannot split {} rows of {} into {} equal parts", t.size(0),
           shape_str(t.shape()), n);
  const std::vector<double> v = t.contiguous().to_vector();
  Shape shape = t.shape();
  shape[0] /= n;
  const size_t each = v.size() / static_cast<size_t>(n);
  std::vector<Tensor> parts;
  for (int64_t i = 0; i < n; ++i) {
    const auto begin = v.begin() + static_cast<std::ptrdiff_t>(each * static_cast<size_t>(i));
    parts.push_back(Tensor::from_vector(std::vector<double>(begin, begin + static_cast<std::ptrdiff_t>(each)),
                                        shape, t.dtype()));
  }
  return parts;
}

}  // namespace

const std::vector<std::string>& hf_model_types() {
  static const std::vector<std::string> types = {"openai-gpt", "gpt2", "llama", "mistral", "gemma", "mixtral"};
  return types;
}

std::string hf_architecture(const std::string& model_type) {
  if (model_type == "openai-gpt") return "OpenAIGPTLMHeadModel";
  if (model_type == "gpt2") return "GPT2LMHeadModel";
  if (model_type == "llama") return "LlamaForCausalLM";
  if (model_type == "mistral") return "MistralForCausalLM";
  if (model_type == "gemma") return "GemmaForCausalLM";
  if (model_type == "mixtral") return "MixtralForCausalLM";
  fail("hf", "unknown model_type '{}'; normlab reads {}", model_type, fmt::join(hf_model_types(), ", "));
}

std::vector<HfTensorRule> hf_tensor_rules(const std::string& model_type, int64_t n_layers, int64_t n_experts) {
  std::vector<HfTensorRule> out;
  if (model_type == "openai-gpt") {
    out.push_back({"transformer.tokens_embed.weight", {"tok_emb.weight"}, HfLayout::same});
    out.push_back({"transformer.positions_embed.weight", {"pos_emb.weight"}, HfLayout::same});
    add_layers(out, gpt_layer_rules(), n_layers);
  } else if (model_type == "gpt2") {
    out.push_back({"transformer.wte.weight", {"tok_emb.weight"}, HfLayout::same});
    out.push_back({"transformer.wpe.weight", {"pos_emb.weight"}, HfLayout::same});
    add_layers(out, gpt_layer_rules(), n_layers);
    out.push_back({"transformer.ln_f.weight", {"final_norm.weight"}, HfLayout::same});
    out.push_back({"transformer.ln_f.bias", {"final_norm.bias"}, HfLayout::same});
  } else if (model_type == "llama" || model_type == "mistral" || model_type == "gemma") {
    out.push_back({"model.embed_tokens.weight", {"tok_emb.weight"}, HfLayout::same});
    add_layers(out, joined(llama_attention_rules(), llama_mlp_rules()), n_layers);
    out.push_back({"model.norm.weight", {"final_norm.weight"}, HfLayout::same});
  } else if (model_type == "mixtral") {
    out.push_back({"model.embed_tokens.weight", {"tok_emb.weight"}, HfLayout::same});
    add_layers(out, joined(llama_attention_rules(), mixtral_moe_rules()), n_layers, n_experts);
    out.push_back({"model.norm.weight", {"final_norm.weight"}, HfLayout::same});
  } else {
    hf_architecture(model_type);  // throws naming the known types
  }
  out.push_back({"lm_head.weight", {"lm_head.weight"}, HfLayout::same});  // untied heads only
  return out;
}

Tensor hf_tensor_from_parts(HfLayout layout, const std::vector<Tensor>& parts) {
  switch (layout) {
    case HfLayout::same: return parts.at(0).contiguous();
    case HfLayout::conv1d: return transposed(parts.at(0));
    case HfLayout::conv1d_qkv: return transposed(concat_rows(parts));
    case HfLayout::split3: return concat_rows(parts);
  }
  fail("hf", "unknown layout");
}

std::vector<Tensor> parts_from_hf_tensor(HfLayout layout, const Tensor& hf) {
  switch (layout) {
    case HfLayout::same: return {hf.contiguous()};
    case HfLayout::conv1d: return {transposed(hf)};
    case HfLayout::conv1d_qkv: return split_rows(transposed(hf), 3);
    case HfLayout::split3: return split_rows(hf, 3);
  }
  fail("hf", "unknown layout");
}

Shape hf_shape(HfLayout layout, const std::vector<Shape>& parts) {
  switch (layout) {
    case HfLayout::same: return parts.at(0);
    case HfLayout::conv1d: return {parts.at(0).at(1), parts.at(0).at(0)};
    case HfLayout::conv1d_qkv: return {parts.at(0).at(1), 3 * parts.at(0).at(0)};
    case HfLayout::split3: return {3 * parts.at(0).at(0)};
  }
  fail("hf", "unknown layout");
}

}  // namespace normlab
