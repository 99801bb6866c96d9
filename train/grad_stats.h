// Gradient statistics for logging: the L2 norm of each parameter's gradient, with the layer its
// role places it in (per-layer aggregates are formed by train/run_dir.h when the CSV is written).
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "autograd/var.h"

namespace normlab {

// A layer, in the run files' column order: (stack, index), the stack 0 for a decoder-only or
// encoder-only model's blocks, 1 for an encoder-decoder's encoder, 2 for its decoder.
using LayerKey = std::pair<int, int>;
// The layer a parameter's role places it in; nullopt for the embeddings, the final norms and the head.
std::optional<LayerKey> layer_key_of(const ParamRole& role);

struct ParamGradNorm {
  std::string name;
  double norm = 0.0;
  std::optional<LayerKey> layer;  // layer_key_of(its role)
};

// Every parameter's ||grad||_2 (0 for a parameter that received no gradient) and layer.
std::vector<ParamGradNorm> parameter_grad_norms(const std::vector<std::pair<std::string, Var>>& params);

}  // namespace normlab
