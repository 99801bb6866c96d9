// TransformerLM: tok_emb [x sqrt(d)] + positions (learned pos_emb or the fixed sinusoidal table) -> blocks.0 .. blocks.{L-1} -> [final_norm] -> head.
// Parameter names: tok_emb.weight (V,C), pos_emb.weight (context_length, C) (learned positions only),
// blocks.N.<block's names, see nn/block.h>, final_norm.* (pre, sandwich), lm_head.weight (V,C)
// when the head is not tied to tok_emb. arch "encoder_decoder": the names of nn/transformer.h, the
// stacks' layers in nn/seq2seq_layer.h.
#include "nn/transformer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "autograd/autocast.h"
#include "autograd/ops.h"
#include "core/ops.h"
#include "nn/attention.h"
#include "nn/block.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/norms.h"
#include "nn/seq2seq_layer.h"
#include "nn/transformer_impl.h"

namespace normlab {

namespace {

void validate(const ModelConfig& c) {
  NL_CHECK(c.encoder_layers == 0 || c.arch == ModelArch::EncoderDecoder, "model",
           "encoder_layers = {} needs arch 'encoder_decoder' (the other architectures have one stack of n_layers)",
           c.encoder_layers);
  if (c.arch == ModelArch::EncoderDecoder) {
    NL_CHECK(c.sliding_window == 0, "model", "arch 'encoder_decoder' does not support sliding_window (got {})",
             c.sliding_window);
  }
  NL_CHECK(c.vocab_size > 0, "model", "vocab_size must be > 0, got {}", c.vocab_size);
  NL_CHECK(c.vocab_size <= std::numeric_limits<int32_t>::max(), "model",
           "vocab_size must be <= 2^31 - 1 (token ids are int32), got {}", c.vocab_size);
  NL_CHECK(c.d_model > 0, "model", "d_model must be > 0, got {}", c.d_model);
  NL_CHECK(c.n_heads > 0, "model", "n_heads must be > 0, got {}", c.n_heads);
  NL_CHECK(c.n_layers > 0, "model", "n_layers must be > 0, got {}", c.n_layers);
  NL_CHECK(c.d_ff > 0, "model", "d_ff must be > 0, got {}", c.d_ff);
  NL_CHECK(c.context_length > 0, "model", "context_length must be > 0, got {}", c.context_length);
  NL_CHECK(c.head_dim > 0 || c.d_model % c.n_heads == 0, "model",
           "d_model ({}) must be divisible by n_heads ({}) unless head_dim is set", c.d_model, c.n_heads);
  NL_CHECK(c.head_dim >= 0 && c.n_kv_heads >= 0, "model", "head_dim ({}) and n_kv_heads ({}) must be >= 0",
           c.head_dim, c.n_kv_heads);
  NL_CHECK(c.n_heads % kv_heads_of(c) == 0, "model", "n_heads ({}) must be a multiple of n_kv_heads ({})",
           c.n_heads, kv_heads_of(c));
  NL_CHECK(c.position_embedding != PositionEmbedding::Rope || head_dim_of(c) % 2 == 0, "model",
           "rope needs an even head_dim, got {}", head_dim_of(c));
  NL_CHECK(c.rope_theta > 0, "model", "rope_theta must be > 0, got {}", c.rope_theta);
  NL_CHECK(c.sliding_window >= 0, "model", "sliding_window must be >= 0 (0 = off), got {}", c.sliding_window);
  NL_CHECK(c.padding_idx >= -1 && c.padding_idx < c.vocab_size, "model",
           "padding_idx must be -1 (none) or a token id < vocab_size ({}), got {}", c.vocab_size, c.padding_idx);
  // The parameter matrices' sizes (their bytes are checked where they are allocated).
  checked_mul(c.vocab_size, c.d_model, "model", "vocab_size * d_model");
  checked_mul(c.context_length, c.d_model, "model", "context_length * d_model");
  checked_mul(c.d_model, c.d_model, "model", "d_model * d_model");
  checked_mul(checked_mul(c.n_heads, head_dim_of(c), "model", "n_heads * head_dim"), c.d_model, "model",
              "n_heads * head_dim * d_model");
  checked_mul(c.d_model, c.d_ff, "model", "d_model * d_ff");
  NL_CHECK(c.dropout >= 0.0 && c.dropout < 1.0, "model", "dropout must be in [0, 1), got {}", c.dropout);
  NL_CHECK(std::isfinite(c.z_loss_coef) && c.z_loss_coef >= 0.0, "model",
           "z_loss_coef must be finite and >= 0, got {}", c.z_loss_coef);
  parameter_dtype(c);  // throws on an unknown dtype
  if (c.ffn_type == FfnType::Moe) {
    NL_CHECK(c.n_experts >= 1, "model", "n_experts must be >= 1, got {}", c.n_experts);
    NL_CHECK(c.experts_top_k >= 1 && c.experts_top_k <= c.n_experts, "model",
             "experts_top_k must be in [1, n_experts = {}], got {}", c.n_experts, c.experts_top_k);
    NL_CHECK(std::isfinite(c.router_aux_loss_coef) && c.router_aux_loss_coef >= 0.0, "model",
             "router_aux_loss_coef must be >= 0, got {}", c.router_aux_loss_coef);
    checked_mul(checked_mul(c.n_experts, c.d_model, "model", "n_experts * d_model"), c.d_ff, "model",
                "n_experts * d_model * d_ff");
  }
}

}  // namespace

// sqrt(mean(x^2)), computed on the host side of the tape (records nothing).
double rms(const Var& x) {
  return std::sqrt(ops::sum_squares(x.value()) / static_cast<double>(x.value().numel()));
}


Tensor sinusoidal_positions(int64_t t, int64_t c, DType dtype) {
  NL_CHECK(t >= 1 && c >= 1, "sinusoidal_positions", "needs T >= 1 and C >= 1, got T = {}, C = {}", t, c);
  std::vector<double> table(static_cast<size_t>(t * c));
  for (int64_t p = 0; p < t; ++p)
    for (int64_t j = 0; j < c; ++j) {
      const double frequency = std::pow(10000.0, -static_cast<double>(j - j % 2) / static_cast<double>(c));
      const double angle = static_cast<double>(p) * frequency;
      table[static_cast<size_t>(p * c + j)] = j % 2 == 0 ? std::sin(angle) : std::cos(angle);
    }
  return Tensor::from_vector(table, {t, c}, dtype);
}

TransformerLM::TransformerLM(const ModelConfig& config) : impl_(std::make_shared<Impl>()), config_(config) {
  validate(config);
  const DType dtype = parameter_dtype(config);
  Impl& m = *impl_;
  m.tok_emb = register_module(
      "tok_emb", std::make_shared<Embedding>(config.vocab_size, config.d_model, dtype, ParamKind::TokenEmbedding,
                                                config.padding_idx));
  if (config.arch == ModelArch::EncoderDecoder) {
    build_encoder_decoder();
  } else {
    if (config.position_embedding == PositionEmbedding::Learned)
      m.pos_emb =
          register_module("pos_emb", std::make_shared<Embedding>(config.context_length, config.d_model, dtype,
                                                                 ParamKind::PositionEmbedding));
    m.blocks = register_module("blocks", std::make_shared<BlockList>());
    for (int64_t l = 0; l < config.n_layers; ++l) m.blocks->append(make_block(config, l));
    if (placement_has_final_norm(config.norm_placement))
      m.final_norm = register_module("final_norm", std::make_shared<Norm>(config, config.d_model));
  }
  if (!config.tie_embeddings)
    m.lm_head = register_module(
        "lm_head", std::make_shared<Linear>(config.d_model, config.vocab_size, false, dtype));
  if (m.lm_head) m.lm_head->edit_roles([](ParamRole& r) { r.group = ParamGroup::Head; });
  initialize_parameters(*this, config);
  for (auto& [name, param] : named_parameters()) param.set_name(name);
  name_scopes("");
}

void check_ids(const Tensor& ids, const char* what, int64_t context_length) {
  const bool sources = std::string(what) == "sources";
  NL_CHECK(ids.defined() && ids.dim() == 2 && ids.dtype() == DType::I32, "model", "{} must be int32 (B, {}), got {}",
           what, sources ? "S" : "T", ids.defined() ? ids.describe() : std::string("undefined"));
  const int64_t t = ids.size(1);
  NL_CHECK(t >= 1 && t <= context_length, "model", "{} length {} = {} must be in [1, context_length = {}]",
           sources ? "source" : "sequence", sources ? "S" : "T", t, context_length);
}

Var TransformerLM::embed(const Tensor& ids, const Embedding& table, const Embedding* positions, uint64_t site,
                         int64_t start) {
  const int64_t t = ids.size(1);
  const Device device = table.weight().value().device();
  Var tokens = table.forward(ids.to(device));  // (B,T,C)
  if (const double multiplier = embedding_multiplier(config_); multiplier != 1.0) tokens = scale(tokens, multiplier);
  Var x = tokens;
  if (positions) {
    std::vector<int32_t> position_ids(static_cast<size_t>(t));
    std::iota(position_ids.begin(), position_ids.end(), static_cast<int32_t>(start));
    const Tensor pos_ids = Tensor::from_ints(position_ids, {t}).to(device);
    x = add(tokens, positions->forward(pos_ids));  // (B,T,C)
  } else if (config_.position_embedding == PositionEmbedding::Sinusoidal) {
    const Tensor all = sinusoidal_positions(start + t, config_.d_model, tokens.value().dtype());
    const Tensor table_t = start == 0 ? all : position_rows(all, start, t);  // (T,C)
    x = add(tokens, constant(table_t.to(tokens.value().device())));  // (B,T,C) + (T,C)
  }
  return dropout(x, config_.dropout, dropout_site_seed(dropout_seed_, site), is_training());
}

Var TransformerLM::logits_of(const Var& x) {
  if (impl_->lm_head) return impl_->lm_head->forward(x);  // (B,T,V)
  return matmul(x, autocast(impl_->tok_emb->weight()), false, true);  // x E^T: (B,T,C) x (V,C)^T -> (B,T,V)
}

Var TransformerLM::forward(const Tensor& ids) {
  NL_CHECK(config_.arch != ModelArch::EncoderDecoder, "model",
           "arch 'encoder_decoder' needs sources: call forward/loss/training_loss(ids, [targets,] sources, "
           "source_padding)");
  check_ids(ids, "ids", config_.context_length);
  const Impl& m = *impl_;
  Var x = embed(ids, *m.tok_emb, m.pos_emb.get(), 0);
  residual_rms_.clear();
  for (const auto& block : m.blocks->blocks()) {
    if (record_residual_rms_) residual_rms_.push_back(rms(x));
    const ScopeGuard in_block(block->scope());  // its norms and residual adds; sub-layers name their own
    x = block->forward(x, dropout_seed_);
  }
  if (record_residual_rms_) residual_rms_.push_back(rms(x));
  if (m.final_norm) {
    const ScopeGuard in_final_norm(m.final_norm->scope());
    x = m.final_norm->forward(x);
  }
  return logits_of(x);
}


static void check_targets(const Tensor& ids, const Tensor& targets) {
  NL_CHECK(targets.defined() && targets.shape() == ids.shape() && targets.dtype() == DType::I32, "model",
           "targets must be int32 with the shape of ids {}, got {}", shape_str(ids.shape()),
           targets.defined() ? targets.describe() : std::string("undefined"));
}

Var TransformerLM::loss(const Tensor& ids, const Tensor& targets) {
  check_targets(ids, targets);
  return cross_entropy(in_float32(forward(ids)), targets, -1);  // the loss in float32 under autocast
}

Var TransformerLM::loss(const Tensor& ids, const Tensor& targets, const Tensor& sources,
                        const Tensor& source_padding) {
  check_targets(ids, targets);
  return cross_entropy(in_float32(forward(ids, sources, source_padding)), targets, -1);
}

Var TransformerLM::training_loss(const Tensor& ids, const Tensor& targets) {
  NL_CHECK(config_.arch != ModelArch::EncoderDecoder, "model",
           "arch 'encoder_decoder' needs sources: call training_loss(ids, targets, sources, source_padding)");
  return training_loss(ids, targets, Tensor(), Tensor());
}

Var TransformerLM::training_loss(const Tensor& ids, const Tensor& targets, const Tensor& sources,
                                 const Tensor& source_padding) {
  check_targets(ids, targets);
  const Var logits = in_float32(forward(ids, sources, source_padding));  // (B,T,V), float32 under autocast
  Var total = config_.label_smoothing > 0.0 ? label_smoothed_cross_entropy(logits, targets, config_.label_smoothing, -1)
                                            : cross_entropy(logits, targets, -1);
  if (config_.ffn_type == FfnType::Moe && config_.router_aux_loss_coef > 0.0)
    total = add(total, scale(router_aux_loss(), config_.router_aux_loss_coef));
  if (config_.z_loss_coef > 0.0) total = add(total, scale(z_loss(logits, targets, -1), config_.z_loss_coef));
  return total;
}

Var z_loss(const Var& logits, const Tensor& targets, int32_t ignore_index) {
  const Shape lead(logits.shape().begin(), logits.shape().end() - std::min(logits.dim(), 1));
  NL_CHECK(logits.dim() >= 1 && targets.defined() && targets.dtype() == DType::I32 && targets.shape() == lead,
           "z_loss", "targets must be int32 with logits {} without the last axis, got {}",
           shape_str(logits.shape()), targets.defined() ? targets.describe() : std::string("undefined"));
  const Var lse = logsumexp(logits);  // (...)
  const std::vector<int32_t> ids = targets.to_ints();
  std::vector<double> counted(ids.size());
  std::transform(ids.begin(), ids.end(), counted.begin(),
                 [ignore_index](int32_t t) { return t == ignore_index ? 0.0 : 1.0; });
  const double n = std::accumulate(counted.begin(), counted.end(), 0.0);
  if (n > 0 && n == static_cast<double>(ids.size())) return mean_all(square(lse));  // nothing ignored
  const Tensor mask = Tensor::from_vector(counted, lse.shape(), lse.value().dtype()).to(lse.value().device());
  // No counted token: 0 (and a zero gradient), as cross_entropy's mean over an empty set.
  return scale(sum_all(mul(square(lse), constant(mask))), n > 0 ? 1.0 / n : 0.0);
}

std::vector<Routing> TransformerLM::routings() const {
  std::vector<std::shared_ptr<FeedForwardLayer>> ffns;
  if (impl_->blocks)
    for (const auto& block : impl_->blocks->blocks()) ffns.push_back(block->ffn());
  for (const auto& stack : {impl_->encoder, impl_->decoder})
    if (stack)
      for (const auto& layer : stack->layers()) ffns.push_back(layer->ffn());
  std::vector<Routing> out;
  for (const auto& ffn : ffns)
    if (const auto moe = std::dynamic_pointer_cast<MoeFeedForward>(ffn);
        moe && moe->last_routing().probs.defined())
      out.push_back(moe->last_routing());
  return out;
}

Var TransformerLM::router_aux_loss() const {
  NL_CHECK(config_.ffn_type == FfnType::Moe, "model", "router_aux_loss needs ffn_type 'moe', got '{}'",
           config_.ffn_type);
  const std::vector<Routing> all = routings();
  NL_CHECK(!all.empty(), "model", "router_aux_loss needs a forward first");
  return load_balancing_loss(all);
}

}  // namespace normlab
