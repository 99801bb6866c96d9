#include "nn/init.h"

#include <algorithm>
#include <cmath>

#include "autograd/tape.h"
#include "core/ops.h"
#include "core/random.h"

namespace normlab {

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool is_residual_output(const std::string& name) {
  return ends_with(name, "attn.o.weight") || ends_with(name, "ffn.w2.weight");
}
bool is_deepnorm_scaled(const std::string& name) {
  return ends_with(name, "ffn.w1.weight") || ends_with(name, "ffn.w2.weight") ||
         ends_with(name, "ffn.w3.weight") || ends_with(name, "attn.v.weight") ||
         ends_with(name, "attn.o.weight");
}
// Row `row` of a (V, C) matrix set to 0 (torch zeroes the padding_idx row at init).
void zero_row(Tensor& matrix, int64_t row) {
  std::vector<double> values = matrix.to_vector();
  const int64_t cols = matrix.size(1);
  std::fill(values.begin() + row * cols, values.begin() + (row + 1) * cols, 0.0);
  matrix.copy_(Tensor::from_vector(values, matrix.shape(), matrix.dtype()).to(matrix.device()));
}
}  // namespace

const std::vector<std::string>& init_names() {
  static const std::vector<std::string> names = {"xavier", "gpt2", "normal"};
  return names;
}

const std::vector<std::string>& embedding_scale_names() {
  static const std::vector<std::string> names = {"none", "sqrt_d"};
  return names;
}

double embedding_multiplier(const ModelConfig& config) {
  if (config.embedding_scale == "none") return 1.0;
  if (config.embedding_scale == "sqrt_d") return std::sqrt(static_cast<double>(config.d_model));
  fail("model", "embedding_scale must be one of {}, got '{}'", fmt::join(embedding_scale_names(), ", "),
       config.embedding_scale);
}

double deepnorm_alpha(int64_t n_layers) { return std::pow(2.0 * static_cast<double>(n_layers), 0.25); }
double deepnorm_beta(int64_t n_layers) { return std::pow(8.0 * static_cast<double>(n_layers), -0.25); }

void initialize_parameters(Module& model, const ModelConfig& config) {
  const auto& names = init_names();
  NL_CHECK(std::find(names.begin(), names.end(), config.init) != names.end(), "model",
           "init must be one of {}, got '{}'", fmt::join(names, ", "), config.init);
  NoGradGuard no_grad;
  Generator gen(config.seed);
  const double layers = static_cast<double>(std::max<int64_t>(config.n_layers, 1));
  const bool deepnorm = config.norm_placement == "deepnorm";
  for (auto& [name, param] : model.named_parameters()) {
    Tensor& value = param.value();
    if (value.dim() == 1) {  // biases 0; norm gains 1 (unit offset: stored 0)
      const bool gain = ends_with(name, ".weight") && config.norm_type != "rmsnorm_unit_offset";
      value.fill_(gain ? 1.0 : 0.0);
      continue;
    }
    NL_CHECK(value.dim() == 2, "init", "parameter '{}' has unexpected shape {}", name,
             shape_str(value.shape()));
    double std = 0.0;
    if (config.init == "xavier" && name == "tok_emb.weight" && embedding_multiplier(config) != 1.0) {
      std = 1.0 / std::sqrt(static_cast<double>(config.d_model));
    } else if (config.init == "xavier") {
      const double fan_out = static_cast<double>(value.size(0)), fan_in = static_cast<double>(value.size(1));
      std = std::sqrt(2.0 / (fan_in + fan_out));
    } else if (config.init == "gpt2") {
      std = is_residual_output(name) ? 0.02 / std::sqrt(2.0 * layers) : 0.02;
    } else {  // normal
      std = 0.02;
    }
    if (deepnorm && is_deepnorm_scaled(name)) std *= deepnorm_beta(config.n_layers);
    value.copy_(Tensor::randn(value.shape(), gen, 0.0, std, value.dtype()));
    if (name == "tok_emb.weight" && config.padding_idx >= 0) zero_row(value, config.padding_idx);
  }
}

}  // namespace normlab
