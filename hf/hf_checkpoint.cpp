#include "hf/hf_checkpoint.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/atomic_file.h"
#include "hf/hf_names.h"
#include "io/safetensors.h"
#include "nn/attention.h"
#include "nn/layers.h"

namespace normlab {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// config.json with its path for messages; a key that is absent or null takes the family's default.
struct HfJson {
  std::string path;
  json j;

  bool has(const char* key) const { return j.contains(key) && !j[key].is_null(); }
  template <typename T> T get(const char* key, const char* what) const {
    try {
      return j.at(key).get<T>();
    } catch (const json::exception&) {
      fail("hf", "{}: key '{}' must be {}, got {}", path, key, what, has(key) ? j[key].dump() : "nothing");
    }
  }
  // An integer key: a JSON integer within int64 (nlohmann would truncate 64.5 to 64, and convert
  // 1e72 with undefined behaviour).
  int64_t integer(const char* key) const {
    NL_CHECK(has(key), "hf", "{}: key '{}' is missing", path, key);
    const json& v = j.at(key);
    const bool fits = v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX);
    NL_CHECK(fits, "hf", "{}: key '{}' must be an integer, got {}", path, key, v.dump());
    return v.get<int64_t>();
  }
  int64_t integer_or(const char* key, int64_t fallback) const { return has(key) ? integer(key) : fallback; }
  // A size (a width, a count of heads, layers, experts, positions): an integer >= 1. Hugging Face
  // has no 0 for them; normlab's 0 ("as many as n_heads", "d_model / n_heads") must not be read
  // into a config that says something else.
  int64_t size(const char* key) const {
    const int64_t v = integer(key);
    NL_CHECK(v >= 1, "hf", "{}: key '{}' must be a positive integer, got {}", path, key, v);
    return v;
  }
  int64_t size_or(const char* key, int64_t fallback) const { return has(key) ? size(key) : fallback; }
  double number_or(const char* key, double fallback) const {
    return has(key) ? get<double>(key, "a number") : fallback;
  }
  bool boolean_or(const char* key, bool fallback) const { return has(key) ? get<bool>(key, "a boolean") : fallback; }
  std::string string_or(const char* key, const std::string& fallback) const {
    return has(key) ? get<std::string>(key, "a string") : fallback;
  }
  // A key whose value normlab cannot reproduce: throws naming it.
  void require(bool ok, const char* key, const std::string& supported) const {
    NL_CHECK(ok, "hf", "{}: {} = {} is not supported (normlab reproduces {})", path, key,
             has(key) ? j[key].dump() : "null", supported);
  }
};

HfJson read_json(const std::string& path) {
  std::ifstream in(path);
  NL_CHECK(in.good(), "hf", "{}: cannot open (a Hugging Face checkpoint directory needs config.json)", path);
  std::stringstream text;
  text << in.rdbuf();
  try {
    json j = json::parse(text.str());
    NL_CHECK(j.is_object(), "hf", "{}: expected a JSON object", path);
    return {path, std::move(j)};
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number past double
    fail("hf", "{}: invalid JSON: {}", path, e.what());
  }
}

// GPT-1 (post-norm, no final norm, d_ff 4C) and GPT-2 (pre-norm, final ln_f, n_inner).
void read_gpt_config(const HfJson& h, bool gpt2, ModelConfig& c) {
  c.vocab_size = h.size("vocab_size");
  c.d_model = h.size("n_embd");
  c.n_heads = h.size("n_head");
  c.n_layers = h.size("n_layer");
  c.context_length = h.size("n_positions");
  c.norm_eps = h.number_or("layer_norm_epsilon", 1e-5);
  c.norm_type = NormType::LayerNorm;
  c.norm_placement = gpt2 ? NormPlacement::Pre : NormPlacement::Post;
  c.ffn_type = FfnType::Gelu;  // the tanh approximation (HF's gelu_new; GPT-1's "gelu" is the same)
  c.bias = true;
  c.position_embedding = PositionEmbedding::Learned;
  c.tie_embeddings = h.boolean_or("tie_word_embeddings", true);
  c.init = gpt2 ? InitScheme::Gpt2 : InitScheme::Normal;
  if (gpt2) {
    c.d_ff = h.size_or("n_inner", 4 * c.d_model);
    const std::string act = h.string_or("activation_function", "gelu_new");
    h.require(act == "gelu_new" || act == "gelu_pytorch_tanh", "activation_function", "gelu_new");
    h.require(h.boolean_or("scale_attn_weights", true), "scale_attn_weights", "true");
    h.require(!h.boolean_or("scale_attn_by_inverse_layer_idx", false), "scale_attn_by_inverse_layer_idx", "false");
  } else {
    c.d_ff = 4 * c.d_model;
    const std::string act = h.string_or("afn", "gelu");
    h.require(act == "gelu" || act == "gelu_new", "afn", "gelu (tanh approximation)");
  }
}

// Mixtral's sparse MoE keys. HF adds router_aux_loss_coef * aux loss to its loss only with
// output_router_logits, so the coefficient is kept only then (else 0, as HF's loss).
void read_mixtral_moe(const HfJson& h, ModelConfig& c) {
  c.ffn_type = FfnType::Moe;
  c.n_experts = h.size("num_local_experts");
  c.experts_top_k = h.size("num_experts_per_tok");
  const double coef = h.number_or("router_aux_loss_coef", 0.001);
  c.router_aux_loss_coef = h.boolean_or("output_router_logits", false) ? coef : 0.0;
  h.require(h.number_or("router_jitter_noise", 0.0) == 0.0, "router_jitter_noise", "0");
}

// Llama, Mistral, Gemma, Mixtral: pre-norm RMSNorm, RoPE, GQA, gated MLP (Mixtral: MoE), no biases.
void read_llama_config(const HfJson& h, const std::string& type, ModelConfig& c) {
  const bool gemma = type == "gemma";
  const bool windowed = type == "mistral" || type == "mixtral";
  c.vocab_size = h.size("vocab_size");
  c.d_model = h.size("hidden_size");
  c.d_ff = h.size("intermediate_size");
  c.n_heads = h.size("num_attention_heads");
  c.n_layers = h.size("num_hidden_layers");
  c.n_kv_heads = h.size_or("num_key_value_heads", c.n_heads);
  c.head_dim = h.size_or("head_dim", gemma ? 256 : 0);
  c.context_length = h.size("max_position_embeddings");
  c.norm_eps = h.number_or("rms_norm_eps", 1e-6);
  c.rope_theta = h.number_or("rope_theta", 10000.0);
  c.padding_idx = h.integer_or("pad_token_id", gemma ? 0 : -1);
  c.tie_embeddings = h.boolean_or("tie_word_embeddings", gemma);
  // Mistral's class default window is 4096, Mixtral's none; an explicit null is none.
  const int64_t default_window = type == "mistral" && !h.j.contains("sliding_window") ? 4096 : 0;
  c.sliding_window = windowed ? h.integer_or("sliding_window", default_window) : 0;
  h.require(!h.has("rope_scaling"), "rope_scaling", "null (plain RoPE)");
  h.require(!h.boolean_or("attention_bias", false), "attention_bias", "false (normlab's bias flag covers every layer)");
  if (gemma) {
    const std::string act = h.string_or("hidden_activation", "gelu_pytorch_tanh");
    h.require(act == "gelu_pytorch_tanh" || act == "gelu_new", "hidden_activation", "gelu_pytorch_tanh");
  } else {
    h.require(h.string_or("hidden_act", "silu") == "silu", "hidden_act", "silu");
  }
  c.norm_type = gemma ? NormType::RmsNormUnitOffset : NormType::RmsNorm;
  c.norm_placement = NormPlacement::Pre;
  c.ffn_type = gemma ? FfnType::GeGlu : FfnType::SwiGlu;
  c.embedding_scale = gemma ? EmbeddingScale::SqrtD : EmbeddingScale::None;
  c.bias = false;
  c.position_embedding = PositionEmbedding::Rope;
  c.init = InitScheme::Normal;
  if (type == "mixtral") read_mixtral_moe(h, c);
}

void copy_gpt_keys(const ModelConfig& c, bool gpt2, json& j) {
  j["vocab_size"] = c.vocab_size;
  j["n_embd"] = c.d_model;
  j["n_head"] = c.n_heads;
  j["n_layer"] = c.n_layers;
  j["n_positions"] = c.context_length;
  j["layer_norm_epsilon"] = c.norm_eps;
  j["tie_word_embeddings"] = c.tie_embeddings;
  if (gpt2) {
    j["n_inner"] = c.d_ff;
    j["activation_function"] = "gelu_new";
  } else {
    j["afn"] = "gelu";
  }
}

void copy_llama_keys(const ModelConfig& c, const std::string& type, json& j) {
  j["vocab_size"] = c.vocab_size;
  j["hidden_size"] = c.d_model;
  j["intermediate_size"] = c.d_ff;
  j["num_attention_heads"] = c.n_heads;
  j["num_hidden_layers"] = c.n_layers;
  j["num_key_value_heads"] = kv_heads_of(c);
  j["head_dim"] = head_dim_of(c);
  j["max_position_embeddings"] = c.context_length;
  j["rms_norm_eps"] = c.norm_eps;
  j["rope_theta"] = c.rope_theta;
  j["tie_word_embeddings"] = c.tie_embeddings;
  j["pad_token_id"] = c.padding_idx >= 0 ? json(c.padding_idx) : json(nullptr);
  j["attention_bias"] = false;
  if (type == "mistral" || type == "mixtral")
    j["sliding_window"] = c.sliding_window > 0 ? json(c.sliding_window) : json(nullptr);
  if (type == "mixtral") {
    j["num_local_experts"] = c.n_experts;
    j["num_experts_per_tok"] = c.experts_top_k;
    j["router_aux_loss_coef"] = c.router_aux_loss_coef;
    j["output_router_logits"] = c.router_aux_loss_coef > 0.0;
  }
  if (type == "gemma") j["hidden_activation"] = "gelu_pytorch_tanh";
  else j["hidden_act"] = "silu";
}

// The [model] fields a Hugging Face family fixes, as text, for comparing a model with its family.
std::vector<std::pair<std::string, std::string>> structure(const ModelConfig& c) {
  const bool rope = c.position_embedding == PositionEmbedding::Rope;
  const bool moe = c.ffn_type == FfnType::Moe;
  return {{"vocab_size", fmt::format("{}", c.vocab_size)}, {"d_model", fmt::format("{}", c.d_model)},
          {"n_heads", fmt::format("{}", c.n_heads)}, {"n_layers", fmt::format("{}", c.n_layers)},
          {"d_ff", fmt::format("{}", c.d_ff)}, {"context_length", fmt::format("{}", c.context_length)},
          {"n_kv_heads", fmt::format("{}", kv_heads_of(c))}, {"head_dim", fmt::format("{}", head_dim_of(c))},
          {"norm_type", enum_name(c.norm_type)}, {"norm_eps", fmt::format("{}", c.norm_eps)},
          {"norm_placement", enum_name(c.norm_placement)}, {"ffn_type", enum_name(c.ffn_type)},
          {"bias", c.bias ? "true" : "false"}, {"tie_embeddings", c.tie_embeddings ? "true" : "false"},
          {"embedding_scale", enum_name(c.embedding_scale)}, {"position_embedding", enum_name(c.position_embedding)},
          {"rope_theta", rope ? fmt::format("{}", c.rope_theta) : "-"},
          {"sliding_window", fmt::format("{}", c.sliding_window)}, {"padding_idx", fmt::format("{}", c.padding_idx)},
          {"n_experts", moe ? fmt::format("{}", c.n_experts) : "-"},
          {"experts_top_k", moe ? fmt::format("{}", c.experts_top_k) : "-"},
          {"router_aux_loss_coef", moe ? fmt::format("{}", c.router_aux_loss_coef) : "-"}};
}

// Names Hugging Face may store that carry no parameter: attention masks of old GPT checkpoints,
// RoPE caches of old Llama ones.
bool ignorable(const std::string& name) {
  return name.ends_with(".attn.bias") || name.ends_with(".attn.masked_bias") || name.ends_with("rotary_emb.inv_freq");
}

}  // namespace

ModelConfig hf_model_config(const std::string& path, ParamDType dtype, std::string* model_type) {
  const HfJson h = read_json(path);
  const std::string type = h.string_or("model_type", "");
  const auto& types = hf_model_types();
  NL_CHECK(std::find(types.begin(), types.end(), type) != types.end(), "hf",
           "{}: unknown model_type '{}'; normlab reads {}", path, type, fmt::join(types, ", "));
  ModelConfig c;
  c.dropout = 0.0;
  c.dtype = dtype;
  if (type == "openai-gpt" || type == "gpt2") read_gpt_config(h, type == "gpt2", c);
  else read_llama_config(h, type, c);
  try {
    TransformerLM check(c);  // validates sizes and combinations
  } catch (const Error& e) {
    fail("hf", "{}: not a valid model: {}", path, e.what());
  }
  if (model_type) *model_type = type;
  return c;
}

HfCheckpoint read_hf_checkpoint(const std::string& dir, ParamDType dtype) {
  HfCheckpoint out;
  out.config = hf_model_config((fs::path(dir) / "config.json").string(), dtype, &out.model_type);
  const SafetensorsFile file = load_safetensors((fs::path(dir) / "model.safetensors").string());
  const TransformerLM shapes(out.config);
  std::map<std::string, Shape> wanted;
  for (const auto& [name, param] : shapes.named_parameters()) wanted[name] = param.shape();
  std::set<std::string> used;
  const DType to = parameter_dtype(out.config);
  for (const HfTensorRule& rule : hf_tensor_rules(out.model_type, out.config.n_layers, out.config.n_experts)) {
    std::vector<Shape> part_shapes;
    for (const std::string& n : rule.normlab)
      if (wanted.count(n)) part_shapes.push_back(wanted.at(n));
    if (part_shapes.size() != rule.normlab.size()) continue;  // the model has no such parameter
    NL_CHECK(file.contains(rule.hf), "hf", "{}: tensor '{}' is missing (needed for {})", file.path, rule.hf,
             fmt::join(rule.normlab, ", "));
    const Tensor& hf = file.get(rule.hf);
    // Any floating dtype converts on load (a bfloat16 or float16 checkpoint into a float32 model).
    NL_CHECK(is_floating(hf.dtype()), "hf", "{}: tensor '{}' is {}; weights must be F32, F64, BF16 or F16",
             file.path, rule.hf, dtype_name(hf.dtype()));
    const Shape expected = hf_shape(rule.layout, part_shapes);
    NL_CHECK(hf.shape() == expected, "hf", "{}: tensor '{}' has shape {} but {} is expected", file.path, rule.hf,
             shape_str(hf.shape()), shape_str(expected));
    const std::vector<Tensor> parts = parts_from_hf_tensor(rule.layout, hf.to(to));
    for (size_t i = 0; i < parts.size(); ++i) out.weights.emplace_back(rule.normlab[i], parts[i]);
    used.insert(rule.hf);
  }
  NL_CHECK(out.weights.size() == wanted.size(), "hf", "{}: {} of the model's {} parameters have no Hugging Face name",
           file.path, wanted.size() - out.weights.size(), wanted.size());
  for (const std::string& name : file.names) {
    const bool tied_head = name == "lm_head.weight" && out.config.tie_embeddings;
    NL_CHECK(used.count(name) || ignorable(name) || tied_head, "hf",
             "{}: unexpected tensor '{}' (not part of a {} model with this config)", file.path, name, out.model_type);
  }
  return out;
}

void load_hf_weights(TransformerLM& model, const HfCheckpoint& checkpoint) {
  std::map<std::string, Tensor> weights(checkpoint.weights.begin(), checkpoint.weights.end());
  for (auto& [name, param] : model.named_parameters()) {
    auto it = weights.find(name);
    NL_CHECK(it != weights.end(), "hf", "the checkpoint has no weight for parameter '{}'", name);
    NL_CHECK(it->second.shape() == param.shape(), "hf", "weight '{}' is {}, the parameter {}", name,
             shape_str(it->second.shape()), shape_str(param.shape()));
    param.value().copy_(it->second.to(param.value().device()));
  }
}

NamedTensors to_hf_tensors(const std::string& model_type, const ModelConfig& config, const NamedTensors& named) {
  std::map<std::string, Tensor> by_name;
  for (const auto& [name, t] : named) by_name[name] = t.to(Device::cpu());
  NamedTensors out;
  size_t used = 0;
  for (const HfTensorRule& rule : hf_tensor_rules(model_type, config.n_layers, config.n_experts)) {
    std::vector<Tensor> parts;
    for (const std::string& n : rule.normlab)
      if (by_name.count(n)) parts.push_back(by_name.at(n));
    if (parts.size() != rule.normlab.size()) continue;
    out.emplace_back(rule.hf, hf_tensor_from_parts(rule.layout, parts));
    used += parts.size();
  }
  NL_CHECK(used == by_name.size(), "hf", "{} of {} tensors have no {} name (is the model of this family?)",
           by_name.size() - used, by_name.size(), model_type);
  return out;
}

std::string hf_config_json(const std::string& model_type, const ModelConfig& config) {
  json j;
  j["architectures"] = json::array({hf_architecture(model_type)});
  j["model_type"] = model_type;
  j["torch_dtype"] = enum_name(config.dtype);
  if (model_type == "openai-gpt" || model_type == "gpt2") copy_gpt_keys(config, model_type == "gpt2", j);
  else copy_llama_keys(config, model_type, j);
  // What the file says must be the model: read it back and compare the structure.
  HfJson back{"config.json", j};
  ModelConfig read;
  if (model_type == "openai-gpt" || model_type == "gpt2") read_gpt_config(back, model_type == "gpt2", read);
  else read_llama_config(back, model_type, read);
  const auto want = structure(config), got = structure(read);
  for (size_t i = 0; i < want.size(); ++i)
    NL_CHECK(want[i].second == got[i].second, "hf", "model_type '{}' cannot express {} = {} (it has {})",
             model_type, want[i].first, want[i].second, got[i].second);
  return j.dump(2) + "\n";
}

void write_hf_checkpoint(const std::string& dir, const std::string& model_type, const TransformerLM& model) {
  const std::string config_text = hf_config_json(model_type, model.config());
  NamedTensors params;
  for (const auto& [name, p] : model.named_parameters()) params.emplace_back(name, p.value());
  const NamedTensors hf = to_hf_tensors(model_type, model.config(), params);
  fs::create_directories(dir);
  save_safetensors((fs::path(dir) / "model.safetensors").string(), hf, {{"format", "pt"}});
  write_file_atomic((fs::path(dir) / "config.json").string(), config_text);
}

std::string hf_model_type_of_preset(const std::string& preset) {
  if (preset == "gpt1") return "openai-gpt";
  if (preset == "gpt2" || preset == "llama" || preset == "mistral" || preset == "gemma" || preset == "mixtral")
    return preset;
  return "";
}

}  // namespace normlab
