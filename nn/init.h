// Weight initialisation, by parameter role (autograd/param_role.h) and shape, seeded from ModelConfig::seed (one core
// Generator drawn in named_parameters() order: the same config gives the same weights).
//   xavier:   every matrix (Linear W (out, in), embeddings (V, C)) ~ N(0, 2 / (fan_in + fan_out))
//   gpt2:     every matrix ~ N(0, 0.02^2); residual output projections (attn.o, ffn.w2 and each
//             MoE expert's w2) std 0.02 / sqrt(2L)
//   normal:   every matrix ~ N(0, 0.02^2) (Hugging Face's _init_weights with initializer_range 0.02:
//             GPT-1, Llama, Mistral, Gemma)
//   all:      biases 0; norm gains 1 (rmsnorm_unit_offset: stored 0, acting as 1)
//   (the token tables: tok_emb.weight and an encoder_decoder model's untied src_emb.weight)
//   embedding_scale "sqrt_d" with xavier: tok_emb.weight ~ N(0, 1 / d_model) (fairseq's pairing with
//             the sqrt(d_model) multiplier; gpt2 keeps 0.02, as Hugging Face's Gemma)
//   padding_idx >= 0: that row of tok_emb.weight (src_emb.weight) is 0 (as torch's nn.Embedding(padding_idx=...))
//   a placement's init scale, after the above (DeepNet's beta; Admin's 1): ffn.w1/w2/w3 (and the
//             experts'), attn.v and attn.o weights (cross_attn's too) times the row's scale for their stack
#pragma once
#include <string>
#include <vector>

#include "nn/model_config.h"
#include "nn/module.h"

namespace normlab {

void initialize_parameters(Module& model, const ModelConfig& config);

// The factor the token embeddings are multiplied by in the forward: 1 or sqrt(d_model).
double embedding_multiplier(const ModelConfig& config);


}  // namespace normlab
