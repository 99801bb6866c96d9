#include "nn/init.h"

#include <algorithm>
#include <cmath>

#include "autograd/tape.h"
#include "core/ops.h"
#include "core/random.h"
#include "nn/placement.h"

namespace normlab {

namespace {
// The stack a parameter's placement init scale is taken over: an encoder_decoder model's encoder
// or decoder, else the single stack.
Stack stack_of(const ParamRole& role, const ModelConfig& config) {
  if (config.arch != ModelArch::EncoderDecoder) return single_stack(config);
  return role.stack == LayerStack::Encoder ? encoder_stack(config) : decoder_stack(config);
}
// Row `row` of a (V, C) matrix set to 0 (torch zeroes the padding_idx row at init).
void zero_row(Tensor& matrix, int64_t row) {
  std::vector<double> values = matrix.to_vector();
  const int64_t cols = matrix.size(1);
  std::fill(values.begin() + row * cols, values.begin() + (row + 1) * cols, 0.0);
  matrix.copy_(Tensor::from_vector(values, matrix.shape(), matrix.dtype()).to(matrix.device()));
}
}  // namespace

double embedding_multiplier(const ModelConfig& config) {
  return config.embedding_scale == EmbeddingScale::SqrtD ? std::sqrt(static_cast<double>(config.d_model)) : 1.0;
}

void initialize_parameters(Module& model, const ModelConfig& config) {
  NoGradGuard no_grad;
  Generator gen(config.seed);
  const double layers = static_cast<double>(std::max<int64_t>(config.n_layers, 1));
  const PlacementKind& placement = placement_kind(config.norm_placement);
  for (auto& [name, param] : model.named_parameters()) {
    Tensor& value = param.value();
    const ParamRole& role = param.role();
    if (role.kind == ParamKind::NormParam || role.kind == ParamKind::Bias) {
      value.fill_(role.norm_initial);  // a bias's is 0
      continue;
    }
    NL_CHECK(value.dim() == 2, "init", "parameter '{}' has unexpected shape {}", name,
             shape_str(value.shape()));
    double std = 0.0;
    const bool xavier = config.init == InitScheme::Xavier;
    const bool token_embedding = role.kind == ParamKind::TokenEmbedding;
    if (xavier && token_embedding && embedding_multiplier(config) != 1.0) {
      std = 1.0 / std::sqrt(static_cast<double>(config.d_model));
    } else if (xavier) {
      const double fan_out = static_cast<double>(value.size(0)), fan_in = static_cast<double>(value.size(1));
      std = std::sqrt(2.0 / (fan_in + fan_out));
    } else if (config.init == InitScheme::Gpt2) {
      std = role.residual_output ? 0.02 / std::sqrt(2.0 * layers) : 0.02;
    } else {  // normal
      std = 0.02;
    }
    if (role.placement_scaled) std *= placement_init_scale(placement, stack_of(role, config));
    value.copy_(Tensor::randn(value.shape(), gen, 0.0, std, value.dtype()));
    if (token_embedding && config.padding_idx >= 0) zero_row(value, config.padding_idx);
  }
}

}  // namespace normlab
