#include "nn/ffn.h"

#include <algorithm>

#include "autograd/ops.h"
#include "nn/moe.h"

namespace normlab {

std::shared_ptr<FeedForwardLayer> make_feed_forward(const ModelConfig& config) {
  if (config.ffn_type == FfnType::Moe) return std::make_shared<MoeFeedForward>(config);
  return std::make_shared<FeedForward>(config);
}

FeedForward::FeedForward(const ModelConfig& config) : type_(config.ffn_type), dropout_(config.dropout) {
  NL_CHECK(type_ != FfnType::Moe, "model", "ffn_type 'moe' is a MoeFeedForward (make_feed_forward), not a dense FFN");
  const int64_t c = config.d_model, f = config.d_ff;
  const DType dtype = parameter_dtype(config);
  w1_ = register_module("w1", std::make_shared<Linear>(c, f, config.bias, dtype));
  w2_ = register_module("w2", std::make_shared<Linear>(f, c, config.bias, dtype));
  if (type_ == FfnType::SwiGlu || type_ == FfnType::GeGlu)
    w3_ = register_module("w3", std::make_shared<Linear>(c, f, config.bias, dtype));
  mark_scaled_matrix(*w1_, /*residual_output=*/false);
  mark_scaled_matrix(*w2_, /*residual_output=*/true);
  if (w3_) mark_scaled_matrix(*w3_, /*residual_output=*/false);
}

Var FeedForward::forward(const Var& x, uint64_t dropout_seed) {
  const Var h1 = w1_->forward(x);  // (B,T,F)
  Var hidden;
  switch (type_) {
    case FfnType::Relu: hidden = relu(h1); break;
    case FfnType::Gelu: hidden = gelu(h1); break;
    case FfnType::SwiGlu: hidden = mul(silu(h1), w3_->forward(x)); break;
    case FfnType::GeGlu: hidden = mul(gelu(h1), w3_->forward(x)); break;
    case FfnType::Moe: break;  // refused by the constructor: a MoeFeedForward (nn/moe.h)
  }
  return dropout(w2_->forward(hidden), dropout_, dropout_seed, is_training());
}

}  // namespace normlab
