// The model's hyper-parameters: everything a config file's [model] section can set.
// Presets (nn/presets.h) fill these as the seed articles describe; config keys override a preset.
#pragma once
#include <cstdint>
#include <string>

#include "core/named_enum.h"

namespace normlab {

// Gemma's RmsNormUnitOffset scales by (1 + w), so its gain starts at 0.
enum class NormType { LayerNorm, RmsNorm, RmsNormUnitOffset, GroupNorm, BatchNorm, None };
// Post: Vaswani/GPT-1/Xiong Post-LN. Pre: GPT-2/LLaMA, with a final norm. None: residual only.
// Sandwich: Peri-LN, a norm before and after each sub-layer, final norm. DeepNorm: Wang et al. 2022.
enum class NormPlacement { Post, Pre, None, Sandwich, DeepNorm };
// Relu (Xiong), Gelu (GPT-2), SwiGlu (LLaMA: w2(silu(w1 x) * w3 x)), GeGlu (Gemma: w2(gelu(w1 x) * w3 x)),
// Moe (Mixtral: a router picks experts_top_k of n_experts SwiGLU experts per token, nn/moe.h).
enum class FfnType { Relu, Gelu, SwiGlu, GeGlu, Moe };
// Xavier: N(0, 2/(fan_in+fan_out)). Gpt2: N(0, 0.02), residual outputs / sqrt(2L).
enum class InitScheme { Xavier, Gpt2 };
// SqrtD: token embeddings multiplied by sqrt(d_model) in the forward (fairseq's Transformer, which
// Xiong et al. used; Gemma). With Xavier init the token embedding is then N(0, 1/d_model) as in
// fairseq, so the residual stream starts at unit variance.
enum class EmbeddingScale { None, SqrtD };

template <> struct EnumNames<NormType> {
  static constexpr std::array<NamedValue<NormType>, 6> values{{{NormType::LayerNorm, "layernorm"},
                                                                {NormType::RmsNorm, "rmsnorm"},
                                                                {NormType::RmsNormUnitOffset, "rmsnorm_unit_offset"},
                                                                {NormType::GroupNorm, "groupnorm"},
                                                                {NormType::BatchNorm, "batchnorm"},
                                                                {NormType::None, "none"}}};
};
template <> struct EnumNames<NormPlacement> {
  static constexpr std::array<NamedValue<NormPlacement>, 5> values{{{NormPlacement::Post, "post"},
                                                                     {NormPlacement::Pre, "pre"},
                                                                     {NormPlacement::None, "none"},
                                                                     {NormPlacement::Sandwich, "sandwich"},
                                                                     {NormPlacement::DeepNorm, "deepnorm"}}};
};
template <> struct EnumNames<FfnType> {
  static constexpr std::array<NamedValue<FfnType>, 5> values{{{FfnType::Relu, "relu"},
                                                               {FfnType::Gelu, "gelu"},
                                                               {FfnType::SwiGlu, "swiglu"},
                                                               {FfnType::GeGlu, "geglu"},
                                                               {FfnType::Moe, "moe"}}};
};
template <> struct EnumNames<InitScheme> {
  static constexpr std::array<NamedValue<InitScheme>, 2> values{
      {{InitScheme::Xavier, "xavier"}, {InitScheme::Gpt2, "gpt2"}}};
};
template <> struct EnumNames<EmbeddingScale> {
  static constexpr std::array<NamedValue<EmbeddingScale>, 2> values{
      {{EmbeddingScale::None, "none"}, {EmbeddingScale::SqrtD, "sqrt_d"}}};
};

struct ModelConfig {
  int64_t vocab_size = 256;
  int64_t d_model = 128;
  int64_t n_heads = 4;
  int64_t n_layers = 4;
  int64_t d_ff = 512;             // FFN hidden width (SwiGLU: width of each of the two branches)
  int64_t context_length = 64;    // learned positional embedding rows
  NormType norm_type = NormType::LayerNorm;
  double norm_eps = 1e-5;
  int64_t norm_groups = 4;        // groupnorm only
  NormPlacement norm_placement = NormPlacement::Pre;
  FfnType ffn_type = FfnType::Gelu;
  int64_t n_experts = 8;          // moe only (Mixtral's num_local_experts)
  int64_t experts_top_k = 2;      // moe only: experts per token (num_experts_per_tok)
  // moe only: the trainer minimises loss + coef * load-balancing loss (Hugging Face's
  // router_aux_loss_coef; 0 = off, as HF without output_router_logits)
  double router_aux_loss_coef = 0.0;
  bool bias = true;               // biases in linear layers (and norm beta for layernorm)
  double dropout = 0.0;
  bool tie_embeddings = true;     // output projection = token embedding^T
  EmbeddingScale embedding_scale = EmbeddingScale::None;
  InitScheme init = InitScheme::Xavier;
  uint64_t seed = 0;              // weight initialisation
  std::string dtype = "float32";  // parameter dtype: "float32" | "float64" (gradient checks)
};

}  // namespace normlab
