#include "nn/ffn.h"

#include <algorithm>

#include "autograd/ops.h"
#include "nn/moe.h"

namespace normlab {

const std::vector<std::string>& ffn_type_names() {
  static const std::vector<std::string> names = {"relu", "gelu", "swiglu", "geglu", "moe"};
  return names;
}

std::shared_ptr<FeedForwardLayer> make_feed_forward(const ModelConfig& config) {
  if (config.ffn_type == "moe") return std::make_shared<MoeFeedForward>(config);
  return std::make_shared<FeedForward>(config);
}

FeedForward::FeedForward(const ModelConfig& config) : type_(config.ffn_type), dropout_(config.dropout) {
  NL_CHECK(type_ != "moe", "model", "ffn_type 'moe' is a MoeFeedForward (make_feed_forward), not a dense FFN");
  const auto& names = ffn_type_names();
  NL_CHECK(std::find(names.begin(), names.end(), type_) != names.end(), "model",
           "ffn_type must be one of {}, got '{}'", fmt::join(names, ", "), type_);
  const int64_t c = config.d_model, f = config.d_ff;
  const DType dtype = parameter_dtype(config);
  w1_ = register_module("w1", std::make_shared<Linear>(c, f, config.bias, dtype));
  w2_ = register_module("w2", std::make_shared<Linear>(f, c, config.bias, dtype));
  if (type_ == "swiglu" || type_ == "geglu")
    w3_ = register_module("w3", std::make_shared<Linear>(c, f, config.bias, dtype));
}

Var FeedForward::forward(const Var& x, uint64_t dropout_seed) {
  const Var h1 = w1_->forward(x);  // (B,T,F)
  Var hidden;
  if (type_ == "relu") hidden = relu(h1);
  else if (type_ == "gelu") hidden = gelu(h1);
  else if (type_ == "swiglu") hidden = mul(silu(h1), w3_->forward(x));
  else hidden = mul(gelu(h1), w3_->forward(x));  // geglu
  return dropout(w2_->forward(hidden), dropout_, dropout_seed, is_training());
}

}  // namespace normlab
