// Gradient checks of the MoE FFN (nn/moe.h) in the op-case registry's format, float64.
//
// The routing (which k experts each token reaches) is a step function of the router logits: it has
// no derivative, and the backward treats it as a constant. A central difference agrees with that
// only if the +-h perturbation leaves every token's choice unchanged, so each case draws inputs
// whose routing margin (nn/moe.h: the smallest logit gap between a chosen and an unchosen expert)
// is at least kMinMargin, redrawing from the next seed otherwise. A step of h moves a logit by
// about h |x| or h |W_r| (~1e-5 here), far below 0.01; every expert must also be chosen at least
// once, so no expert's check passes by having an exactly zero gradient on both sides.
#include <functional>
#include <memory>

#include "autograd/tape.h"
#include "core/random.h"
#include "nn/model_cases.h"
#include "nn/moe.h"
#include "nn/transformer.h"

namespace normlab {

namespace {

constexpr double kMinMargin = 0.01;
constexpr int kMaxDraws = 100;

bool routing_fits(const std::vector<Routing>& routings) {
  for (const Routing& r : routings) {
    if (routing_margin(r) < kMinMargin) return false;
    for (int64_t count : expert_counts(r))
      if (count == 0) return false;
  }
  return !routings.empty();
}

// The inputs of the first draw (seed, seed + 1, ...) whose routing fits.
std::vector<Tensor> draw_until_routing_fits(
    const std::function<std::vector<Tensor>(uint64_t)>& draw,
    const std::function<std::vector<Routing>(const std::vector<Tensor>&)>& route, uint64_t seed,
    const std::string& name) {
  for (int attempt = 0; attempt < kMaxDraws; ++attempt) {
    std::vector<Tensor> inputs = draw(seed + static_cast<uint64_t>(attempt));
    if (routing_fits(route(inputs))) return inputs;
  }
  fail("gradcheck", "{}: no draw in {} had a routing margin >= {} with every expert used", name,
       kMaxDraws, kMinMargin);
}

std::vector<Var> constants(const std::vector<Tensor>& tensors, size_t from) {
  std::vector<Var> v;
  for (size_t i = from; i < tensors.size(); ++i) v.push_back(constant(tensors[i]));
  return v;
}

ModelConfig moe_layer_config() {
  ModelConfig c;
  c.d_model = 6;
  c.d_ff = 5;
  c.ffn_type = FfnType::Moe;
  c.n_experts = 4;
  c.experts_top_k = 2;
  c.bias = false;  // Mixtral's experts and router have none
  c.dtype = ParamDType::Float64;
  return c;
}

// One MoE layer on x (2, 5, 6): inputs x, then the layer's parameters.
OpCase moe_layer_case() {
  auto layer = std::make_shared<MoeFeedForward>(moe_layer_config());
  OpCase c;
  c.name = "moe_ffn";
  c.description = "MoE FFN, x (2, 5, 6), 4 SwiGLU experts (F 5), top 2, routing held fixed";
  c.input_names.push_back("x");
  for (const auto& [name, p] : layer->named_parameters()) c.input_names.push_back(name);
  for (size_t i = 0; i < c.input_names.size(); ++i) c.differentiable.push_back(static_cast<int>(i));
  auto draw = [layer](uint64_t seed) {
    Generator gen(seed);
    std::vector<Tensor> t = {Tensor::randn({2, 5, 6}, gen, 0.0, 1.0, DType::F64)};
    for (const Var& p : layer->parameters()) t.push_back(Tensor::randn(p.shape(), gen, 0.0, 0.5, DType::F64));
    return t;
  };
  auto route = [layer](const std::vector<Tensor>& t) {
    NoGradGuard no_grad;
    layer->replace_parameters(constants(t, 1));
    layer->forward(constant(t[0]), 0);
    return std::vector<Routing>{layer->last_routing()};
  };
  c.make_inputs = [draw, route](uint64_t seed, const Shape&) {
    return draw_until_routing_fits(draw, route, seed, "moe_ffn");
  };
  c.fn = [layer](const std::vector<Var>& v) {
    layer->replace_parameters(std::vector<Var>(v.begin() + 1, v.end()));
    return layer->forward(v[0], 0);
  };
  c.options.step = 1e-5;
  return c;
}

// The load-balancing loss of router logits (12, 4) routed top 2: d aux / d logits through P.
OpCase aux_loss_case() {
  OpCase c;
  c.name = "moe_load_balancing_loss";
  c.description = "load-balancing loss of router logits (12, 4), top 2, routing held fixed";
  c.input_names = {"logits"};
  c.differentiable = {0};
  auto draw = [](uint64_t seed) {
    Generator gen(seed);
    return std::vector<Tensor>{Tensor::randn({12, 4}, gen, 0.0, 1.0, DType::F64)};
  };
  auto route = [](const std::vector<Tensor>& t) {
    return std::vector<Routing>{route_top_k(constant(t[0]), 2)};
  };
  c.make_inputs = [draw, route](uint64_t seed, const Shape&) {
    return draw_until_routing_fits(draw, route, seed, "moe_load_balancing_loss");
  };
  c.fn = [](const std::vector<Var>& v) { return load_balancing_loss({route_top_k(v[0], 2)}); };
  c.options.step = 1e-5;
  return c;
}

}  // namespace

ModelConfig tiny_moe_model_config() {
  ModelConfig c = tiny_model_config(NormPlacement::Pre);
  c.norm_type = NormType::RmsNorm;
  c.ffn_type = FfnType::Moe;
  c.n_experts = 3;
  c.experts_top_k = 2;
  c.router_aux_loss_coef = 0.1;  // large enough that its gradient counts in the check
  return c;
}

OpCase make_moe_model_case(std::string name, std::string description, const ModelConfig& config) {
  OpCase c = make_model_case(std::move(name), std::move(description), config);
  auto model = std::make_shared<TransformerLM>(config);
  const TinyBatch batch = tiny_batch(config);
  auto draw = [base = c.make_inputs](uint64_t seed) { return base(seed, {}); };
  auto route = [model, batch](const std::vector<Tensor>& t) {
    NoGradGuard no_grad;
    model->replace_parameters(constants(t, 0));
    model->loss(batch.ids, batch.targets);
    return model->routings();
  };
  const std::string case_name = c.name;
  c.make_inputs = [draw, route, case_name](uint64_t seed, const Shape&) {
    return draw_until_routing_fits(draw, route, seed, case_name);
  };
  return c;
}

void register_moe_cases(std::vector<OpCase>& cases) {
  cases.push_back(moe_layer_case());
  cases.push_back(aux_loss_case());
  cases.push_back(make_moe_model_case(
      "model_moe", "tiny Pre-RMSNorm TransformerLM with MoE FFNs (3 experts, top 2), CE + 0.1 aux loss",
      tiny_moe_model_config()));
}

}  // namespace normlab
