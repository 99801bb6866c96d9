// The two factors of Theorem 1's proof at the last LayerNorm before the head (probes.h:
// final_norm_factors): the norm of its input and the gradient at its output. TransformerLM keeps
// neither tensor, so a second forward runs the same computation through the library's own modules
// (make_block, Norm, CausalSelfAttention, the FFN), each bound to the model's parameters with
// replace_parameters, and stops at the LayerNorm's input; the LayerNorm's output is then made a
// leaf, so that backward() through the head and the loss leaves dLoss/dy in that leaf's grad.
#include <cmath>
#include <map>
#include <numeric>

#include "autograd/autocast.h"
#include "autograd/ops.h"
#include "autograd/tape.h"
#include "core/error.h"
#include "core/ops.h"
#include "nn/attention.h"
#include "nn/block.h"
#include "nn/ffn.h"
#include "nn/init.h"
#include "nn/norms.h"
#include "xiong/probes.h"

namespace normlab::xiong {

namespace {

using Params = std::map<std::string, Var>;

// `module` computing with the model's parameters named prefix + (the module's own names).
template <typename M>
std::shared_ptr<M> bound(std::shared_ptr<M> module, const Params& params, const std::string& prefix) {
  std::vector<Var> vars;
  for (const auto& [name, unused] : module->named_parameters()) {
    const auto it = params.find(prefix + name);
    NL_CHECK(it != params.end(), "final_norm_factors", "the model has no parameter '{}'", prefix + name);
    vars.push_back(it->second);
  }
  module->replace_parameters(vars);
  return module;
}

// The model's forward up to the last LayerNorm: Pre-LN runs every block and stops before
// final_norm; Post-LN runs all but the last block and takes the last one apart
// (h = norm1(x + Attn(x)), z = h + FFN(h), then norm2).
struct StackToLastNorm {
  ModelConfig config;
  Var tok_weight, pos_weight, head_weight;  // pos_weight: learned positions only
  std::vector<std::shared_ptr<Block>> blocks;
  std::shared_ptr<CausalSelfAttention> last_attn;  // Post-LN's last block
  std::shared_ptr<FeedForwardLayer> last_ffn;
  std::shared_ptr<Norm> last_norm1, last_norm;  // last_norm: the LayerNorm whose factors we measure
  std::string site;

  explicit StackToLastNorm(const TransformerLM& model) : config(model.config()) {
    const ModelConfig& c = config;
    NL_CHECK(c.norm_placement == NormPlacement::Pre || c.norm_placement == NormPlacement::Post,
             "final_norm_factors", "needs placement post or pre, got '{}'", c.norm_placement);
    NL_CHECK(c.dropout == 0.0, "final_norm_factors", "needs dropout 0, got {}", c.dropout);
    Params params;
    for (const auto& [name, p] : model.named_parameters()) params[name] = p;
    tok_weight = params.at("tok_emb.weight");
    if (params.count("pos_emb.weight")) pos_weight = params.at("pos_emb.weight");
    head_weight = params.count("lm_head.weight") ? params.at("lm_head.weight") : tok_weight;
    const bool pre = c.norm_placement == NormPlacement::Pre;
    const int64_t full_blocks = pre ? c.n_layers : c.n_layers - 1;
    for (int64_t l = 0; l < full_blocks; ++l)
      blocks.push_back(bound(make_block(c, l), params, "blocks." + std::to_string(l) + "."));
    if (pre) {
      site = "final_norm";
    } else {
      const std::string last = "blocks." + std::to_string(c.n_layers - 1) + ".";
      last_attn = bound(std::make_shared<CausalSelfAttention>(c), params, last + "attn.");
      last_ffn = bound(make_feed_forward(c), params, last + "ffn.");
      last_norm1 = bound(std::make_shared<Norm>(c, c.d_model), params, last + "norm1.");
      site = last + "norm2";
    }
    last_norm = bound(std::make_shared<Norm>(c, c.d_model), params, site + ".");
  }

  // ids (B,T) -> the last LayerNorm's input (B,T,C). Call under NoGradGuard.
  Tensor norm_input(const Tensor& ids) const {
    const int64_t t = ids.size(1);
    Var x = embedding(tok_weight, ids, config.padding_idx);  // (B,T,C)
    if (const double m = embedding_multiplier(config); m != 1.0) x = scale(x, m);
    if (pos_weight.defined()) {
      std::vector<int32_t> positions(static_cast<size_t>(t));
      std::iota(positions.begin(), positions.end(), 0);
      x = add(x, embedding(pos_weight, Tensor::from_ints(positions, {t})));  // (B,T,C) + (T,C)
    } else if (config.position_embedding == PositionEmbedding::Sinusoidal) {
      x = add(x, constant(sinusoidal_positions(t, config.d_model, x.value().dtype())));
    }
    for (const auto& block : blocks) x = block->forward(x, 0);
    if (!last_attn) return x.value();  // Pre-LN: the stream after the last block
    const Var h = last_norm1->forward(residual_add(x, last_attn->forward(x, 0)));
    return residual_add(h, last_ffn->forward(h, 0)).value();  // Post-LN: z = h + FFN(h)
  }
};

}  // namespace

FinalNormFactors final_norm_factors(const ModelConfig& config, const ProbeBatch& probe, uint64_t data_seed) {
  TransformerLM model(config);
  if (probe.unit_variance_input) rescale_embeddings_to_unit_variance(model);
  const StackToLastNorm stack(model);
  FinalNormFactors out;
  out.site = stack.site;
  const double nb = static_cast<double>(probe.batches);
  for (const auto& [ids, targets] : probe_batches(config.vocab_size, probe, data_seed)) {
    Tensor z, y_value;
    {
      NoGradGuard no_grad;
      z = stack.norm_input(ids);                                  // (B,T,C)
      y_value = stack.last_norm->forward(constant(z)).value();   // (B,T,C)
    }
    const double rows = static_cast<double>(z.numel() / config.d_model);
    out.input_norm += std::sqrt(ops::sum_squares(z) / rows) / nb;
    Var y = parameter(y_value);  // a leaf: backward leaves dLoss/dy here
    const Var logits = matmul(y, constant(stack.head_weight.value()), false, true);  // (B,T,C) x (V,C)^T
    const Var loss = cross_entropy(in_float32(logits), targets, -1);
    backward(loss);
    out.loss += loss.value().item() / nb;
    out.output_grad_norm += std::sqrt(ops::sum_squares(y.grad())) / nb;
  }
  return out;
}

}  // namespace normlab::xiong
