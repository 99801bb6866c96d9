#include "nn/layers.h"

#include "autograd/autocast.h"
#include "autograd/ops.h"

namespace normlab {

DType parameter_dtype(const ModelConfig& config) {
  return config.dtype == ParamDType::Float64 ? DType::F64 : DType::F32;
}

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, DType dtype) {
  NL_CHECK(in_features > 0 && out_features > 0, "linear",
           "features must be positive, got in {} out {}", in_features, out_features);
  register_parameter("weight", parameter(Tensor::zeros({out_features, in_features}, dtype)),
                     {.kind = ParamKind::Matrix});
  if (bias) register_parameter("bias", parameter(Tensor::zeros({out_features}, dtype)), {.kind = ParamKind::Bias});
}

void mark_scaled_matrix(Linear& linear, bool residual_output) {
  linear.edit_roles([&](ParamRole& r) {
    if (r.kind != ParamKind::Matrix) return;
    r.placement_scaled = true;
    r.residual_output = residual_output;
  });
}

Var Linear::forward(const Var& x) const {
  const ScopeGuard in_scope(scope());
  return linear(autocast(x), autocast(weight()), autocast(bias()));  // 16 bits under autocast
}

Embedding::Embedding(int64_t num, int64_t dim, DType dtype, ParamKind kind, int64_t padding_idx)
    : padding_idx_(padding_idx) {
  NL_CHECK(num > 0 && dim > 0, "embedding", "sizes must be positive, got ({}, {})", num, dim);
  NL_CHECK(padding_idx >= -1 && padding_idx < num, "embedding", "padding_idx must be -1 or in [0, {}), got {}",
           num, padding_idx);
  NL_CHECK(kind == ParamKind::TokenEmbedding || kind == ParamKind::PositionEmbedding, "embedding",
           "an embedding table holds tokens or positions");
  register_parameter("weight", parameter(Tensor::zeros({num, dim}, dtype)), {.kind = kind, .group = ParamGroup::Embeddings});
}

Var Embedding::forward(const Tensor& ids) const {
  const ScopeGuard in_scope(scope());
  return autocast(embedding(weight(), ids, padding_idx_));  // rows cast to 16 bits under autocast
}

}  // namespace normlab

namespace normlab {

uint64_t dropout_site_seed(uint64_t base, uint64_t site) {
  uint64_t z = base + 0x9e3779b97f4a7c15ull * (site + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace normlab
