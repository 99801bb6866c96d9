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
  int64_t context_length = 64;    // learned positional embedding rows
  // "layernorm" | "rmsnorm" | "rmsnorm_unit_offset" (Gemma's 1 + w) | "groupnorm" | "batchnorm" | "none"
  std::string norm_type = "layernorm";
  double norm_eps = 1e-5;
  int64_t norm_groups = 4;        // groupnorm only
  // "post" (Vaswani/GPT-1/Xiong Post-LN) | "pre" (GPT-2/LLaMA, final norm) | "none" (residual only)
  // | "sandwich" (Peri-LN: norm before and after each sub-layer, final norm) | "deepnorm" (Wang 2022)
  std::string norm_placement = "pre";
  // "relu" (Xiong) | "gelu" (GPT-2) | "swiglu" (LLaMA: w2(silu(w1 x) * w3 x)) | "geglu" (Gemma:
  // w2(gelu(w1 x) * w3 x)) | "moe" (Mixtral: a router picks experts_top_k of n_experts SwiGLU
  // experts per token, nn/moe.h)
  std::string ffn_type = "gelu";
  int64_t n_experts = 8;          // moe only (Mixtral's num_local_experts)
  int64_t experts_top_k = 2;      // moe only: experts per token (num_experts_per_tok)
  // moe only: the trainer minimises loss + coef * load-balancing loss (Hugging Face's
  // router_aux_loss_coef; 0 = off, as HF without output_router_logits)
  double router_aux_loss_coef = 0.0;
  bool bias = true;               // biases in linear layers (and norm beta for layernorm)
  double dropout = 0.0;
  bool tie_embeddings = true;     // output projection = token embedding^T
  // "none" | "sqrt_d": token embeddings multiplied by sqrt(d_model) in the forward (fairseq's
  // Transformer, which Xiong et al. used; Gemma). With init "xavier" the token embedding is then
  // initialised N(0, 1/d_model) as in fairseq, so the residual stream starts at unit variance.
  std::string embedding_scale = "none";
  std::string init = "xavier";    // "xavier": N(0, 2/(fan_in+fan_out)) | "gpt2": N(0, 0.02), residual outputs / sqrt(2L)
  uint64_t seed = 0;              // weight initialisation
  std::string dtype = "float32";  // parameter dtype: "float32" | "float64" (gradient checks)
};

}  // namespace normlab
