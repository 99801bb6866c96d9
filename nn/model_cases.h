// Whole-model gradient checks in the op-case registry's format (autograd/gradcheck.h): every
// parameter of a tiny float64 TransformerLM is an input, the function is its training loss (the mean
// cross-entropy on a fixed batch, plus the MoE load-balancing term when configured). `normlab gradcheck --op all` merges these with the op cases.
#pragma once
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "nn/model_config.h"

namespace normlab {

// The tiny model of the checks: vocab 11, d_model 8, 2 heads, 2 layers, d_ff 16, context 5,
// float64, no dropout; the batch is B 2 x T 5 of fixed random ids and targets.
ModelConfig tiny_model_config(NormPlacement placement);

// A case for `config` (must be float64; any arch, encoder_decoder with tiny_batch's sources). make_inputs returns the model's initial parameters with
// norm gains and biases moved off their init values (1 + 0.1 N(0,1), 0.1 N(0,1)), so no term of
// the derivative is hidden by an exact 1 or 0; the seed is added to config.seed.
OpCase make_model_case(std::string name, std::string description, const ModelConfig& config);

// The fixed batch of a case: B 2 x T = context_length random ids and targets (an encoder's: -1 at
// all but every third position, as masked-LM targets). arch "encoder_decoder": also sources
// B 2 x S = context_length with the second one's last two tokens padded (source_padding 1 there,
// the token id 1), and the decoder side one shorter, T = context_length - 1 (when >= 2), so S != T.
struct TinyBatch {
  Tensor ids, targets;
  Tensor sources, source_padding;  // encoder_decoder only (undefined otherwise)
};
TinyBatch tiny_batch(const ModelConfig& config);

// A tiny float64 pre-norm model with the family's attention ("llama": RoPE + GQA 4 on 2 kv heads,
// RMSNorm, SwiGLU; "mistral": plus sliding window 2; "gemma": head_dim 6, (1+w) RMSNorm, GeGLU,
// sqrt(d) embedding scale, tied head).
ModelConfig tiny_rope_config(const std::string& family);
// Registers "model_post" and "model_pre" (layernorm, gelu, tied head), "model_llama",
// "model_mistral", "model_gemma", "model_encoder_post" and "model_encoder_pre" (model.arch
// "encoder"), then register_moe_cases and register_norm_kind_cases.
void register_model_cases(std::vector<OpCase>& cases);

// ---- nn/norm_kind_cases.cpp ----
// "norm_<type>_composed" for every norm with parameters (its composed forward on x (2, 3, 6)),
// and "model_pre_dyt", "model_post_dyt" (tiny_model_config with Dynamic Tanh).
void register_norm_kind_cases(std::vector<OpCase>& cases);

// ---- nn/moe_cases.cpp ----
// tiny_model_config("pre") with RMSNorm and MoE FFNs: 3 experts, top 2, router_aux_loss_coef 0.1.
ModelConfig tiny_moe_model_config();
// make_model_case for a MoE config, whose inputs are redrawn until every layer's routing has a
// margin >= 0.01 and uses every expert (nn/moe_cases.cpp says why).
OpCase make_moe_model_case(std::string name, std::string description, const ModelConfig& config);
// "moe_ffn" (one layer, routing held fixed), "moe_load_balancing_loss", "model_moe".
void register_moe_cases(std::vector<OpCase>& cases);

}  // namespace normlab
