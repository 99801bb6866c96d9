// The two parameterised building blocks: Linear (PyTorch layout) and Embedding.
#pragma once
#include <cstdint>

#include "core/dtype.h"
#include "nn/model_config.h"
#include "nn/module.h"

namespace normlab {

// ModelConfig::dtype as a DType; throws "[model] dtype must be float32 or float64, got ..."
DType parameter_dtype(const ModelConfig& config);

// y = x W^T + b.  x (..., in) -> y (..., out).  Parameters "weight" (out, in), "bias" (out,) when
// `bias`. Created as zeros; nn/init.h fills them.
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias, DType dtype);
  Var forward(const Var& x) const;
  Var weight() const { return parameter_slot("weight"); }
  Var bias() const { return parameter_slot("bias"); }  // undefined without bias
};

// Marks a Linear's weight as one a placement's init scale multiplies (DeepNet's beta: attention's v
// and o, the FFN's matrices); `residual_output` also marks it as its sub-layer's last projection,
// whose std GPT-2's init divides by sqrt(2L).
void mark_scaled_matrix(Linear& linear, bool residual_output);

// ids int32 (any shape) -> (*ids, dim) rows of "weight" (num, dim), a table of `kind`
// TokenEmbedding or PositionEmbedding. Row padding_idx (>= 0) gets no gradient from the lookup
// (torch's padding_idx); -1 = none.
class Embedding : public Module {
 public:
  Embedding(int64_t num, int64_t dim, DType dtype, ParamKind kind, int64_t padding_idx = -1);
  Var forward(const Tensor& ids) const;
  Var weight() const { return parameter_slot("weight"); }

 private:
  int64_t padding_idx_;
};

}  // namespace normlab

namespace normlab {

// The dropout seed of one site (embedding, layer l's attention, layer l's FFN) for one forward:
// a SplitMix64 mix of (base, site), so masks differ between sites and between steps.
uint64_t dropout_site_seed(uint64_t base, uint64_t site);

}  // namespace normlab
