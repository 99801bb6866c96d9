// The model's hyper-parameters: everything a config file's [model] section can set.
// Presets (nn/presets.h) fill these as the seed articles describe; config keys override a preset.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/named_enum.h"

namespace normlab {

// The built-in norms, in the order of their rows in nn/norm_kinds.cpp (which holds their names,
// parameters and forwards); rows registered at run time take the ids after None. Gemma's
// RmsNormUnitOffset scales by (1 + w), so its gain starts at 0. DynamicTanh: Zhu et al. 2025's
// tanh(alpha x) in place of the norm.
enum class NormType { LayerNorm, RmsNorm, RmsNormUnitOffset, GroupNorm, BatchNorm, DynamicTanh, None };
// The built-in placements, in the order of their rows in nn/placement.cpp (which holds their names,
// wirings and scales); rows registered at run time take the ids after B2T.
enum class NormPlacement { Post, Pre, None, Sandwich, DeepNorm, Admin, MixLn, B2T };
// Relu (Xiong), Gelu (GPT-2), SwiGlu (LLaMA: w2(silu(w1 x) * w3 x)), GeGlu (Gemma: w2(gelu(w1 x) * w3 x)),
// Moe (Mixtral: a router picks experts_top_k of n_experts SwiGLU experts per token, nn/moe.h).
enum class FfnType { Relu, Gelu, SwiGlu, GeGlu, Moe };
// Xavier: N(0, 2/(fan_in+fan_out)). Gpt2: N(0, 0.02), residual outputs / sqrt(2L). Normal: N(0, 0.02)
// everywhere (Hugging Face's init of GPT-1, Llama, Mistral, Gemma).
enum class InitScheme { Xavier, Gpt2, Normal };
// Learned: GPT-1/GPT-2's pos_emb table added to the tokens. Rope: rotary, Hugging Face's rotate-half
// layout, on q and k in every layer. Sinusoidal: the original Transformer's fixed table (no
// parameters), PE(p, 2i) = sin(p / 10000^(2i/C)), PE(p, 2i+1) = cos(p / 10000^(2i/C)), added after
// the token embedding's scaling (fairseq, the platform of Xiong et al.). None: no positions.
enum class PositionEmbedding { Learned, Rope, Sinusoidal, None };
// SqrtD: token embeddings multiplied by sqrt(d_model) in the forward (fairseq's Transformer, which
// Xiong et al. used; Gemma). With Xavier init the token embedding is then N(0, 1/d_model) as in
// fairseq, so the residual stream starts at unit variance.
enum class EmbeddingScale { None, SqrtD };
// The parameters' dtype: float32 (training), float64 (gradient checks against finite differences).
enum class ParamDType { Float32, Float64 };
// Decoder: causal self-attention, trained on the next token (GPT). Encoder: bidirectional
// self-attention (every query sees every key), trained as a masked language model (BERT: the
// trainer wraps the data in data/masked_lm.cpp; the head predicts the original token at the masked
// positions). EncoderDecoder: fairseq's Transformer (Xiong et al. 2020's translation model), an
// encoder over the source and a decoder with cross-attention over the target (nn/transformer.h,
// nn/seq2seq_layer.h); its forward and losses take the sources.
enum class ModelArch { Decoder, Encoder, EncoderDecoder };

// Names from the norm table, which grows at run time (nn/norm_kinds.cpp).
template <> struct EnumNames<NormType> {
  static std::vector<NamedValue<NormType>> runtime_values();
};
// Names from the placement table, which grows at run time (nn/placement.cpp).
template <> struct EnumNames<NormPlacement> {
  static std::vector<NamedValue<NormPlacement>> runtime_values();
};
template <> struct EnumNames<FfnType> {
  static constexpr std::array<NamedValue<FfnType>, 5> values{{{FfnType::Relu, "relu"},
                                                               {FfnType::Gelu, "gelu"},
                                                               {FfnType::SwiGlu, "swiglu"},
                                                               {FfnType::GeGlu, "geglu"},
                                                               {FfnType::Moe, "moe"}}};
};
template <> struct EnumNames<InitScheme> {
  static constexpr std::array<NamedValue<InitScheme>, 3> values{
      {{InitScheme::Xavier, "xavier"}, {InitScheme::Gpt2, "gpt2"}, {InitScheme::Normal, "normal"}}};
};
template <> struct EnumNames<PositionEmbedding> {
  static constexpr std::array<NamedValue<PositionEmbedding>, 4> values{
      {{PositionEmbedding::Learned, "learned"},
       {PositionEmbedding::Rope, "rope"},
       {PositionEmbedding::Sinusoidal, "sinusoidal"},
       {PositionEmbedding::None, "none"}}};
};
template <> struct EnumNames<EmbeddingScale> {
  static constexpr std::array<NamedValue<EmbeddingScale>, 2> values{
      {{EmbeddingScale::None, "none"}, {EmbeddingScale::SqrtD, "sqrt_d"}}};
};

template <> struct EnumNames<ModelArch> {
  static constexpr std::array<NamedValue<ModelArch>, 3> values{{{ModelArch::Decoder, "decoder"},
                                                                 {ModelArch::Encoder, "encoder"},
                                                                 {ModelArch::EncoderDecoder, "encoder_decoder"}}};
};

template <> struct EnumNames<ParamDType> {
  static constexpr std::array<NamedValue<ParamDType>, 2> values{
      {{ParamDType::Float32, "float32"}, {ParamDType::Float64, "float64"}}};
};

struct ModelConfig {
  ModelArch arch = ModelArch::Decoder;
  int64_t vocab_size = 256;
  int64_t d_model = 128;
  int64_t n_heads = 4;
  int64_t n_layers = 4;           // blocks; encoder_decoder: the decoder's layers
  int64_t encoder_layers = 0;     // encoder_decoder: the encoder's layers (0 = n_layers)
  int64_t d_ff = 512;             // FFN hidden width (SwiGLU: width of each of the two branches)
  int64_t context_length = 64;    // longest sequence (learned positional embedding rows)
  // Attention shape: n_kv_heads key/value heads shared by n_heads / n_kv_heads query heads each
  // (grouped-query; 1 = multi-query; 0 = n_heads, plain multi-head), head_dim per head (0 =
  // d_model / n_heads; Gemma decouples it). Query head h reads key/value head h / (n_heads / n_kv_heads).
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  PositionEmbedding position_embedding = PositionEmbedding::Learned;
  double rope_theta = 10000.0;    // rope: inv_freq_i = theta^(-2i/head_dim)
  // Causal attention limited to the last sliding_window + 1 keys (query i sees keys i - W .. i, as
  // Hugging Face's Mistral); 0 = plain causal. Decoder only (an encoder's attention is unmasked).
  int64_t sliding_window = 0;
  // QK-norm (Dehghani et al. 2023, Wortsman et al. 2023's remedy for attention-logit growth): q and k
  // normalized per head, over their head_dim features, with the model's norm_type, before RoPE
  // and the scores (parameters blocks.N.attn.q_norm.*, k_norm.*).
  bool qk_norm = false;
  // Token id whose embedding row gets no gradient from the lookup (torch's padding_idx; Hugging
  // Face's Llama/Mistral/Gemma use pad_token_id); -1 = none.
  int64_t padding_idx = -1;
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
  // z-loss (PaLM; Wortsman et al. 2023): the trainer minimises loss + coef * mean over the counted
  // tokens of logsumexp(logits)^2, which keeps the softmax normalizer log Z near 0; 0 = off
  double z_loss_coef = 0.0;
  // training_loss uses fairseq's label-smoothed cross-entropy with this epsilon (autograd/ops.h);
  // loss() (validation) stays cross-entropy; 0 = off
  double label_smoothing = 0.0;
  bool bias = true;               // biases in linear layers (and norm beta for layernorm)
  double dropout = 0.0;
  bool tie_embeddings = true;     // output projection = token embedding^T
  EmbeddingScale embedding_scale = EmbeddingScale::None;
  InitScheme init = InitScheme::Xavier;
  uint64_t seed = 0;              // weight initialisation
  ParamDType dtype = ParamDType::Float32;  // parameter dtype (float64: gradient checks)
};

// Whether self-attention is causal: a decoder's is, an encoder's sees every position (with the
// same 1 / sqrt(D) scale). encoder_decoder: its decoder stack's (the encoder stack's is not).
inline bool is_causal(const ModelConfig& config) { return config.arch != ModelArch::Encoder; }

// An encoder_decoder model's encoder depth: encoder_layers, or n_layers when it is 0. Dropout sites
// are numbered from n_layers (the decoder's depth) alone, so equal depths keep earlier runs' masks.
inline int64_t encoder_layers_of(const ModelConfig& config) {
  return config.encoder_layers > 0 ? config.encoder_layers : config.n_layers;
}

}  // namespace normlab
