#include "train/dynamics.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "autograd/autocast.h"
#include "autograd/ops.h"
#include "autograd/tape.h"
#include "core/ops.h"
#include "nn/activation_record.h"

namespace normlab {

namespace fs = std::filesystem;

namespace {

using BlockSums = std::map<LayerKey, double>;  // per block, in column order

// max |x| over all elements.
double max_abs(const Tensor& x) {
  const Tensor flat = x.reshape({x.numel()});
  return std::max(ops::reduce(ReduceOp::Max, flat, 0).item(), ops::reduce(ReduceOp::Max, ops::neg(flat), 0).item());
}

// Appends (prefix + suffix, sqrt(squares)) for each block's sum of squares.
void append_roots(std::vector<std::pair<std::string, double>>& out, const BlockSums& squares,
                  const std::string& suffix) {
  for (const auto& [block, sum] : squares) out.emplace_back(block_prefix(block) + suffix, std::sqrt(sum));
}

}  // namespace

Batch dynamics_probe_batch(const RunConfig& c, const Dataset& data) {
  Generator gen(c.train.seed * 1000003ull + 104729ull);  // not the validation loss's generator
  return data.sample(true, c.train.batch_size, c.train.context, gen);
}

DynamicsLog::DynamicsLog(const RunConfig& c, const Dataset& data, const fs::path& run_dir,
                         std::optional<int64_t> keep_through_step, TensorBoardWriter* events)
    : steps_(c.log.dynamics_steps),
      precision_(c.train.precision),
      beta2_(c.optim.beta2),
      csv_(run_dir / run_files::kDynamics, "dynamics", keep_through_step),
      events_(events),
      probe_batch_(dynamics_probe_batch(c, data)) {}

DynamicsLog::Probe DynamicsLog::probe(TransformerLM& model) const {
  NoGradGuard no_grad;
  AutocastGuard autocast(compute_dtype(precision_));
  const bool training = model.is_training();
  model.eval();
  ActivationRecorder recorder;
  const Batch& b = probe_batch_;
  const Var logits = in_float32(model.forward(b.inputs, b.sources, b.source_padding));  // (B,T,V)
  const Tensor targets = probe_batch_.targets.to(logits.value().device());
  Probe out{logits.value().clone(), {}};
  out.values = {{"probe_loss", cross_entropy(logits, targets, -1).item()}, {"logit_max", max_abs(out.logits)}};
  out.values.insert(out.values.end(), recorder.values().begin(), recorder.values().end());
  model.train(training);
  return out;
}

void DynamicsLog::before_update(TransformerLM& model) {
  if (!at_current_) at_current_ = probe(model);
  weights_before_.clear();
  for (const auto& [name, param] : model.named_parameters())
    if (layer_key_of(param.role())) weights_before_.emplace_back(param, param.value().clone());
}

std::string dynamics_sublayer(const ParamRole& role) {
  if (role.layer < 0) return "";
  switch (role.group) {
    case ParamGroup::Attention: return "attn";
    case ParamGroup::CrossAttention: return "cross_attn";
    case ParamGroup::Ffn: return "ffn";
    default: return "";
  }
}

void DynamicsLog::record_gradients(const TransformerLM& model) {
  std::map<std::string, BlockSums> sublayers;  // "attn", "cross_attn", "ffn" -> per block
  std::vector<std::pair<std::string, double>> weights;  // grad.w1, grad.w2 in parameter order
  for (const auto& [name, param] : model.named_parameters()) {
    const std::optional<LayerKey> block = layer_key_of(param.role());
    if (!block) continue;
    const double squares = param.grad().defined() ? ops::sum_squares(param.grad()) : 0.0;
    if (const std::string sublayer = dynamics_sublayer(param.role()); !sublayer.empty())
      sublayers[sublayer][*block] += squares;
    const std::string prefix = block_prefix(*block);
    for (const char* w : {"w1", "w2"})  // the dense FFN's two matrices, by name
      if (name == prefix + "ffn." + w + ".weight") weights.emplace_back(prefix + "grad." + w, std::sqrt(squares));
  }
  gradient_values_.clear();
  for (const char* sublayer : {"attn", "cross_attn", "ffn"})
    append_roots(gradient_values_, sublayers[sublayer], std::string("grad.") + sublayer);
  gradient_values_.insert(gradient_values_.end(), weights.begin(), weights.end());
}

namespace {

// blocks.N.adam.sqrt_v_mean and .sqrt_v_max from an Adam-family state ("v.<name>", "step.<name>"),
// for the parameters `layers` places in a layer (by name: the state's keys).
std::vector<std::pair<std::string, double>> adam_values(const Optimizer& optimizer, double beta2,
                                                        const std::map<std::string, LayerKey>& layers) {
  const auto state = optimizer.state();
  std::map<std::string, double> steps;
  for (const auto& [key, tensor] : state)
    if (key.rfind("step.", 0) == 0) steps[key.substr(5)] = tensor.item();
  BlockSums sum, max, count;
  for (const auto& [key, tensor] : state) {
    if (key.rfind("v.", 0) != 0) continue;
    const std::string name = key.substr(2);
    const auto layer = layers.find(name);
    if (layer == layers.end() || !steps.count(name)) continue;
    const LayerKey block = layer->second;
    const double correction = 1.0 - std::pow(beta2, steps[name]);
    for (const double v : tensor.to_vector()) {
      const double root = std::sqrt(v / correction);
      sum[block] += root;
      max[block] = std::max(max[block], root);
      count[block] += 1.0;
    }
  }
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [block, total] : sum) {
    out.emplace_back(block_prefix(block) + "adam.sqrt_v_mean", total / count[block]);
    out.emplace_back(block_prefix(block) + "adam.sqrt_v_max", max[block]);
  }
  return out;
}

}  // namespace

void DynamicsLog::after_update(TransformerLM& model, const Optimizer& optimizer, int64_t update) {
  BlockSums change, size;
  for (const auto& [param, before] : weights_before_) {
    const LayerKey block = *layer_key_of(param.role());
    change[block] += ops::sum_squares(ops::sub(param.value(), before));
    size[block] += ops::sum_squares(before);
  }
  std::map<std::string, LayerKey> layers;
  for (const auto& [name, param] : model.named_parameters())
    if (const auto key = layer_key_of(param.role())) layers.emplace(name, *key);
  Probe next = probe(model);
  const Tensor difference = ops::sub(next.logits, at_current_->logits);
  std::vector<std::pair<std::string, double>> row = at_current_->values;
  row.insert(row.begin() + 2, {"output_change", std::sqrt(ops::sum_squares(difference) /
                                                          static_cast<double>(difference.numel()))});
  row.insert(row.end(), gradient_values_.begin(), gradient_values_.end());
  const auto adam = adam_values(optimizer, beta2_, layers);
  row.insert(row.end(), adam.begin(), adam.end());
  for (const auto& [block, squares] : change)
    row.emplace_back(block_prefix(block) + "update_ratio", std::sqrt(squares / size[block]));
  std::vector<std::string> columns;
  std::vector<double> values;
  std::vector<std::pair<std::string, double>> tagged;
  for (const auto& [name, value] : row) {
    columns.push_back(name);
    values.push_back(value);
    tagged.emplace_back("dynamics/" + name, value);
  }
  csv_.write(update, columns, values);
  if (events_) events_->write(update, tagged);
  at_current_ = std::move(next);
}

}  // namespace normlab
