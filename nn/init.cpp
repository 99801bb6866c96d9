#include "nn/init.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "autograd/tape.h"
#include "core/ops.h"
#include "core/random.h"
#include "nn/norm_kinds.h"
#include "nn/placement.h"

namespace normlab {

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
// An FFN's matrix `w` ("w1", "w2", "w3"): "...ffn.w2.weight", or an expert's "...ffn.experts.3.w2.weight".
bool is_ffn_matrix(const std::string& name, const std::string& w) {
  return ends_with(name, "ffn." + w + ".weight") ||
         (name.find(".ffn.experts.") != std::string::npos && ends_with(name, "." + w + ".weight"));
}
// A token embedding table: tok_emb, or an encoder_decoder model's untied source table src_emb.
bool is_token_embedding(const std::string& name) { return name == "tok_emb.weight" || name == "src_emb.weight"; }
bool is_residual_output(const std::string& name) {
  return ends_with(name, "attn.o.weight") || is_ffn_matrix(name, "w2");
}
// The parameters a placement's init scale multiplies (DeepNet's beta: the FFN, v and o).
bool is_init_scaled(const std::string& name) {
  return is_ffn_matrix(name, "w1") || is_ffn_matrix(name, "w2") || is_ffn_matrix(name, "w3") ||
         ends_with(name, "attn.v.weight") || ends_with(name, "attn.o.weight");
}
// The stack a parameter belongs to: an encoder_decoder model's "encoder.N..." or "decoder.N...",
// else the single stack.
Stack stack_of(const std::string& name, const ModelConfig& config) {
  if (config.arch != ModelArch::EncoderDecoder) return single_stack(config);
  return name.rfind("encoder.", 0) == 0 ? encoder_stack(config) : decoder_stack(config);
}
// Row `row` of a (V, C) matrix set to 0 (torch zeroes the padding_idx row at init).
void zero_row(Tensor& matrix, int64_t row) {
  std::vector<double> values = matrix.to_vector();
  const int64_t cols = matrix.size(1);
  std::fill(values.begin() + row * cols, values.begin() + (row + 1) * cols, 0.0);
  matrix.copy_(Tensor::from_vector(values, matrix.shape(), matrix.dtype()).to(matrix.device()));
}
// A parameter of a norm layer (norm1, post_norm2, final_norm, ...): the initial value its row of
// nn/norm_kinds.h gives; nullopt for every other parameter.
std::optional<double> norm_initial_value(const std::string& name, const ModelConfig& config) {
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos) return std::nullopt;
  const std::string module = name.substr(0, dot), leaf = name.substr(dot + 1);
  const size_t last = module.rfind('.');
  if (module.substr(last == std::string::npos ? 0 : last + 1).find("norm") == std::string::npos) return std::nullopt;
  for (const NormParam& p : norm_kind(config.norm_type).params)
    if (p.name == leaf) return p.initial;
  return std::nullopt;
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
    if (const std::optional<double> initial = norm_initial_value(name, config)) {
      value.fill_(*initial);
      continue;
    }
    if (value.dim() == 1) {  // the linear layers' biases
      value.fill_(0.0);
      continue;
    }
    NL_CHECK(value.dim() == 2, "init", "parameter '{}' has unexpected shape {}", name,
             shape_str(value.shape()));
    double std = 0.0;
    const bool xavier = config.init == InitScheme::Xavier;
    if (xavier && is_token_embedding(name) && embedding_multiplier(config) != 1.0) {
      std = 1.0 / std::sqrt(static_cast<double>(config.d_model));
    } else if (xavier) {
      const double fan_out = static_cast<double>(value.size(0)), fan_in = static_cast<double>(value.size(1));
      std = std::sqrt(2.0 / (fan_in + fan_out));
    } else if (config.init == InitScheme::Gpt2) {
      std = is_residual_output(name) ? 0.02 / std::sqrt(2.0 * layers) : 0.02;
    } else {  // normal
      std = 0.02;
    }
    if (is_init_scaled(name)) std *= placement_init_scale(placement, stack_of(name, config));
    value.copy_(Tensor::randn(value.shape(), gen, 0.0, std, value.dtype()));
    if (is_token_embedding(name) && config.padding_idx >= 0) zero_row(value, config.padding_idx);
  }
}

}  // namespace normlab
