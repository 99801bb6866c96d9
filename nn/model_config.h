// The model's hyper-parameters: everything a config file's [model] section can set.
// Presets (nn/presets.h) fill these as the seed articles describe; config keys override a preset.
#pragma once
#include <cstdint>
#include <string>

namespace normlab {

struct ModelConfig {
  int64_t vocab_size = 256;
  int64_t d_model = 128;
  int64_t n_heads = 4;
  int64_t n_layers = 4;
  int64_t d_ff = 512;             // FFN hidden width (SwiGLU: width of each of the two branches)
  int64_t context_length = 64;    // longest sequence (learned positional embedding rows)
  // Attention shape: n_kv_heads key/value heads shared by n_heads / n_kv_heads query heads each
  // (grouped-query; 1 = multi-query; 0 = n_heads, plain multi-head), head_dim per head (0 =
  // d_model / n_heads; Gemma decouples it). Query head h reads key/value head h / (n_heads / n_kv_heads).
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  // "learned" (GPT-1/GPT-2: a pos_emb table added to the tokens) | "rope" (rotary, Hugging Face's
  // rotate-half layout, on q and k in every layer) | "none"
  std::string position_embedding = "learned";
  double rope_theta = 10000.0;    // rope: inv_freq_i = theta^(-2i/head_dim)
  // Causal attention limited to the last sliding_window + 1 keys (query i sees keys i - W .. i, as
  // Hugging Face's Mistral); 0 = plain causal.
  int64_t sliding_window = 0;
  // Token id whose embedding row gets no gradient from the lookup (torch's padding_idx; Hugging
  // Face's Llama/Mistral/Gemma use pad_token_id); -1 = none.
  int64_t padding_idx = -1;
  // "layernorm" | "rmsnorm" | "rmsnorm_unit_offset" (Gemma's 1 + w) | "groupnorm" | "batchnorm" | "none"
  std::string norm_type = "layernorm";
  double norm_eps = 1e-5;
  int64_t norm_groups = 4;        // groupnorm only
  // "post" (Vaswani/GPT-1/Xiong Post-LN) | "pre" (GPT-2/LLaMA, final norm) | "none" (residual only)
  // | "sandwich" (Peri-LN: norm before and after each sub-layer, final norm) | "deepnorm" (Wang 2022)
  std::string norm_placement = "pre";
  // "relu" (Xiong) | "gelu" (GPT-2) | "swiglu" (LLaMA: w2(silu(w1 x) * w3 x)) | "geglu" (Gemma:
  // w2(gelu(w1 x) * w3 x))
  std::string ffn_type = "gelu";
  bool bias = true;               // biases in linear layers (and norm beta for layernorm)
  double dropout = 0.0;
  bool tie_embeddings = true;     // output projection = token embedding^T
  // "none" | "sqrt_d": token embeddings multiplied by sqrt(d_model) in the forward (fairseq's
  // Transformer, which Xiong et al. used; Gemma). With init "xavier" the token embedding is then
  // initialised N(0, 1/d_model) as in fairseq, so the residual stream starts at unit variance.
  std::string embedding_scale = "none";
  // "xavier": N(0, 2/(fan_in+fan_out)) | "gpt2": N(0, 0.02), residual outputs / sqrt(2L) | "normal":
  // N(0, 0.02) everywhere (Hugging Face's init of GPT-1, Llama, Mistral, Gemma)
  std::string init = "xavier";
  uint64_t seed = 0;              // weight initialisation
  std::string dtype = "float32";  // parameter dtype: "float32" | "float64" (gradient checks)
};

}  // namespace normlab
