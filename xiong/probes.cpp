#include "xiong/probes.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "autograd/ops.h"
#include "autograd/tape.h"
#include "core/ops.h"
#include "core/random.h"
#include "data/dataset.h"
#include "train/run_dir.h"
#include "train/train_step.h"
#include "nn/init.h"
#include "nn/norms.h"
#include "nn/transformer.h"
#include "optim/optimizer.h"

namespace normlab::xiong {

Tensor random_tokens(int64_t vocab, int64_t batch, int64_t context, Generator& gen) {
  std::vector<int32_t> ids(static_cast<size_t>(batch * context));
  for (int32_t& id : ids) id = static_cast<int32_t>(gen.below(static_cast<uint64_t>(vocab)));
  return Tensor::from_ints(ids, {batch, context});
}

namespace {

// The block of a decoder-only (or encoder-only) model's layer parameter ("blocks.N.*"), -1 for others.
int block_of(const Var& param) {
  return param.role().stack == LayerStack::Single ? param.role().layer : -1;
}

double norm_of(const Tensor& t) { return std::sqrt(ops::sum_squares(t)); }
double mean_square(const Tensor& t) { return ops::sum_squares(t) / static_cast<double>(t.numel()); }

// Lemma 2's Post-LN quantity per layer: h (rows, C) with zero mean and unit variance per row (a
// LayerNorm output), x5 = h + FFN_l(h) with layer l's weights; returns ||x5||^2 / (rows * C).
std::vector<double> post_ffn_sum_sq(const TransformerLM& model, int64_t rows, uint64_t seed) {
  const ModelConfig& c = model.config();
  if (c.ffn_type != FfnType::Relu && c.ffn_type != FfnType::Gelu) return {};
  NoGradGuard no_grad;
  std::map<std::string, Tensor> p;
  for (const auto& [name, v] : model.named_parameters()) p[name] = v.value();
  Generator gen(seed);
  const DType dtype = p.begin()->second.dtype();
  const Tensor h = layer_norm(constant(Tensor::randn({rows, c.d_model}, gen, 0.0, 1.0, dtype)), Var(), Var(), 1e-5)
                       .value();  // (rows, C)
  const UnaryOp act = c.ffn_type == FfnType::Relu ? UnaryOp::Relu : UnaryOp::Gelu;
  std::vector<double> out;
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const std::string prefix = "blocks." + std::to_string(l) + ".ffn.";
    Tensor a = ops::matmul(h, p.at(prefix + "w1.weight"), false, true);  // (rows, F)
    if (p.count(prefix + "w1.bias")) a = ops::add(a, p.at(prefix + "w1.bias"));
    Tensor y = ops::matmul(ops::unary(act, a), p.at(prefix + "w2.weight"), false, true);  // (rows, C)
    if (p.count(prefix + "w2.bias")) y = ops::add(y, p.at(prefix + "w2.bias"));
    out.push_back(mean_square(ops::add(h, y)));
  }
  return out;
}

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

void rescale_embeddings_to_unit_variance(TransformerLM& model) {
  NoGradGuard no_grad;
  const ModelConfig& c = model.config();
  Var tok, pos;
  for (auto& [name, p] : model.named_parameters()) {
    if (name == "tok_emb.weight") tok = p;
    if (name == "pos_emb.weight") pos = p;
  }
  NL_CHECK(tok.defined(), "rescale_embeddings_to_unit_variance", "the model has no tok_emb.weight");
  const double multiplier = embedding_multiplier(c);
  const double tokens = mean_square(tok.value()) * multiplier * multiplier;
  if (pos.defined()) {  // learned positions: one factor for both tables
    const double factor = 1.0 / std::sqrt(std::max(tokens + mean_square(pos.value()), 1e-30));
    tok.value().copy_(ops::scale(tok.value(), factor));
    pos.value().copy_(ops::scale(pos.value(), factor));
    return;
  }
  double fixed = 0.0;  // the mean square of what is added to the tokens without a parameter
  if (c.position_embedding == PositionEmbedding::Sinusoidal)
    fixed = mean_square(sinusoidal_positions(c.context_length, c.d_model, DType::F32));
  NL_CHECK(fixed < 1.0, "rescale_embeddings_to_unit_variance",
           "the fixed positions alone have mean square {} >= 1: the tokens cannot make it 1", fixed);
  tok.value().copy_(ops::scale(tok.value(), std::sqrt((1.0 - fixed) / std::max(tokens, 1e-30))));
}

std::vector<std::pair<Tensor, Tensor>> probe_batches(int64_t vocab, const ProbeBatch& probe, uint64_t data_seed) {
  Generator gen(data_seed);
  std::vector<std::pair<Tensor, Tensor>> out;
  for (int64_t b = 0; b < probe.batches; ++b) {
    Tensor ids = random_tokens(vocab, probe.batch, probe.context, gen);
    Tensor targets = random_tokens(vocab, probe.batch, probe.context, gen);
    out.emplace_back(ids, targets);
  }
  return out;
}

ModelConfig probe_model(const ModelConfig& base, const std::string& placement, int64_t layers, int seed) {
  ModelConfig c = base;
  c.norm_placement = enum_value<NormPlacement>(placement, "probe_model");
  c.n_layers = layers;
  c.seed = static_cast<uint64_t>(seed);
  return c;
}

LayerGrads measure_layer_grads(const ModelConfig& config, const ProbeBatch& probe, uint64_t data_seed) {
  TransformerLM model(config);
  model.set_record_residual_rms(true);
  if (probe.unit_variance_input) rescale_embeddings_to_unit_variance(model);
  const int64_t L = config.n_layers;
  LayerGrads out;
  out.w1_mean_norm.assign(L, 0.0);
  out.w2_mean_norm.assign(L, 0.0);
  out.attn_mean_norm.assign(L, 0.0);
  out.residual_sq_per_d.assign(L + 1, 0.0);
  std::vector<Tensor> w1_sum(L), w2_sum(L);
  const double nb = static_cast<double>(probe.batches);
  for (const auto& [ids, targets] : probe_batches(config.vocab_size, probe, data_seed)) {
    model.zero_grad();
    backward(model.loss(ids, targets));
    const auto& rms = model.residual_rms();
    for (size_t l = 0; l < rms.size() && l < out.residual_sq_per_d.size(); ++l)
      out.residual_sq_per_d[l] += rms[l] * rms[l] / nb;
    std::vector<double> attn_sq(L, 0.0);
    for (const auto& [name, p] : model.named_parameters()) {
      const int l = block_of(p);
      if (l < 0 || !p.grad().defined()) continue;
      const std::string prefix = fmt::format("blocks.{}.", l);
      if (name == prefix + "ffn.w1.weight") {
        out.w1_mean_norm[l] += norm_of(p.grad()) / nb;
        w1_sum[l] = w1_sum[l].defined() ? ops::add(w1_sum[l], p.grad()) : p.grad().clone();
      } else if (name == prefix + "ffn.w2.weight") {
        out.w2_mean_norm[l] += norm_of(p.grad()) / nb;
        w2_sum[l] = w2_sum[l].defined() ? ops::add(w2_sum[l], p.grad()) : p.grad().clone();
      } else if (p.role().group == ParamGroup::Attention && p.role().kind == ParamKind::Matrix) {
        attn_sq[l] += ops::sum_squares(p.grad());
      }
    }
    for (int64_t l = 0; l < L; ++l) out.attn_mean_norm[l] += std::sqrt(attn_sq[l]) / nb;
  }
  for (int64_t l = 0; l < L; ++l) {
    out.w1_norm_of_mean.push_back(w1_sum[l].defined() ? norm_of(w1_sum[l]) / nb : 0.0);
    out.w2_norm_of_mean.push_back(w2_sum[l].defined() ? norm_of(w2_sum[l]) / nb : 0.0);
  }
  out.post_ffn_sum_sq_per_d = post_ffn_sum_sq(model, probe.batch * probe.context, data_seed ^ 0x5eedull);
  return out;
}

double output_change_after_one_step(const RunConfig& config, const ProbeBatch& probe, uint64_t data_seed) {
  TransformerLM model(config.model);
  Generator gen(data_seed);
  Tensor ids = random_tokens(config.model.vocab_size, probe.batch, probe.context, gen);
  Tensor targets = random_tokens(config.model.vocab_size, probe.batch, probe.context, gen);
  Tensor before;
  {
    NoGradGuard no_grad;
    before = model.forward(ids).value().clone();  // (B, T, V) logits at init
  }
  auto optimizer = make_optimizer(config.optim, model.named_parameters());
  LossScaler scaler = make_loss_scaler(config.train);
  Learner learner{model, *optimizer, scaler};
  const StepResult step = train_step(learner, config, Batch{ids, targets}, 0);
  NL_CHECK(step.divergence.empty() && !step.skipped, "output_change_after_one_step", "the step made no update: {}",
           step.skipped ? "fp16 overflow" : step.divergence);
  NoGradGuard no_grad;
  Tensor after = model.forward(ids).value();
  return norm_of(ops::sub(after, before)) / std::max(norm_of(before), 1e-30);
}

std::vector<std::vector<double>> step_ms_samples(const std::vector<RunConfig>& configs, const ProbeBatch& probe,
                                                 int warmup, int repeats) {
  struct Subject {
    std::unique_ptr<TransformerLM> model;
    std::unique_ptr<Optimizer> optimizer;
    LossScaler scaler;
    std::vector<double> times;
  };
  std::vector<Subject> subjects;
  for (const RunConfig& c : configs) {
    Subject s;
    s.model = std::make_unique<TransformerLM>(c.model);
    s.optimizer = make_optimizer(c.optim, s.model->named_parameters());
    s.scaler = make_loss_scaler(c.train);
    subjects.push_back(std::move(s));
  }
  Generator gen(12345);
  const int64_t vocab = configs.empty() ? 1 : configs.front().model.vocab_size;
  const Batch batch{random_tokens(vocab, probe.batch, probe.context, gen),
                    random_tokens(vocab, probe.batch, probe.context, gen)};
  for (int i = 0; i < warmup + repeats; ++i) {
    for (size_t k = 0; k < subjects.size(); ++k) {
      Subject& s = subjects[k];
      Learner learner{*s.model, *s.optimizer, s.scaler};
      const auto t0 = Clock::now();
      train_step(learner, configs[k], batch, i);
      if (i >= warmup) s.times.push_back(ms_since(t0));
    }
  }
  std::vector<std::vector<double>> samples;
  for (const Subject& s : subjects) samples.push_back(s.times);
  return samples;
}

std::vector<std::vector<double>> norm_ms_samples(const ModelConfig& config, const std::vector<NormType>& norm_types,
                                                 int64_t rows, int warmup, int repeats) {
  std::vector<std::unique_ptr<Norm>> norms;
  for (const NormType type : norm_types) {
    ModelConfig c = config;
    c.norm_type = type;
    norms.push_back(std::make_unique<Norm>(c, c.d_model));
  }
  Generator gen(777);
  const Tensor x0 = Tensor::randn({rows, config.d_model}, gen);
  std::vector<std::vector<double>> times(norms.size());
  for (int i = 0; i < warmup + repeats; ++i) {
    for (size_t k = 0; k < norms.size(); ++k) {
      Var x = parameter(x0.clone());
      const auto t0 = Clock::now();
      backward(sum_all(norms[k]->forward(x)));
      if (i >= warmup) times[k].push_back(ms_since(t0));
      norms[k]->zero_grad();
    }
  }
  return times;
}

std::vector<std::vector<double>> block_update_ratios(const RunConfig& config, int steps) {
  std::unique_ptr<Dataset> data = make_dataset(config.data);
  RunConfig c = config;
  c.model.vocab_size = data->vocab_size();
  TransformerLM model(c.model);
  auto optimizer = make_optimizer(c.optim, model.named_parameters());
  LossScaler scaler = make_loss_scaler(c.train);
  Learner learner{model, *optimizer, scaler};
  Generator data_gen(c.train.seed);  // the trainer's stream
  std::vector<std::vector<double>> out;
  for (int t = 0; t < steps; ++t) {
    const Batch batch = data->sample(false, c.train.batch_size, c.train.context, data_gen);
    std::vector<std::pair<int, Tensor>> before;  // (block, weights before the update)
    for (const auto& [name, p] : model.named_parameters())
      if (const int block = block_of(p); block >= 0) before.emplace_back(block, p.value().clone());
    train_step(learner, c, batch, t);
    const auto n_layers = static_cast<size_t>(c.model.n_layers);
    std::vector<double> moved(n_layers, 0.0), size(n_layers, 0.0);
    size_t i = 0;
    for (const auto& [name, p] : model.named_parameters()) {
      if (block_of(p) < 0) continue;
      const auto& [block, old] = before[i++];
      moved[static_cast<size_t>(block)] += ops::sum_squares(ops::sub(p.value(), old));
      size[static_cast<size_t>(block)] += ops::sum_squares(old);
    }
    std::vector<double> ratio;
    for (size_t l = 0; l < moved.size(); ++l) ratio.push_back(std::sqrt(moved[l] / std::max(size[l], 1e-300)));
    out.push_back(ratio);
  }
  return out;
}

double loglog_slope(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = std::min(x.size(), y.size());
  std::vector<double> lx, ly;
  for (size_t i = 0; i < n; ++i) {
    lx.push_back(std::log(x[i]));
    ly.push_back(std::log(y[i]));
  }
  return linear_slope(lx, ly);
}

double linear_slope(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = std::min(x.size(), y.size());
  if (n < 2) return 0.0;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  return sxx > 0 ? sxy / sxx : 0.0;
}

}  // namespace normlab::xiong
