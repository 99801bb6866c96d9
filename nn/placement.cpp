#include "nn/placement.h"

#include <cmath>
#include <deque>

#include "autograd/ops.h"
#include "nn/layers.h"
#include "nn/runtime_table.h"

namespace normlab {

// ---- DeepNet and Admin constants ----
// DeepNet (Wang et al. 2022, Table 1): one stack of N layers (decoder-only or encoder-only)
// alpha = (2N)^(1/4), beta = (8N)^(-1/4); an encoder-decoder of N encoder and M decoder layers:
// encoder alpha = 0.81 (N^4 M)^(1/16), beta = 0.87 (N^4 M)^(-1/16); decoder alpha = (3M)^(1/4),
// beta = (12M)^(-1/4). Admin without profiling (Liu et al. 2020; admin-torch's constant, output
// change O(log n)): omega = sqrt((n + 1) / ln(n + 1) - 1) for the stack's n residual sub-layers.

double deepnorm_alpha(const Stack& s) {
  const double n = static_cast<double>(s.layers), other = static_cast<double>(s.other_layers);
  switch (s.kind) {
    case Stack::Kind::Single: return std::pow(2.0 * n, 0.25);
    case Stack::Kind::Encoder: return 0.81 * std::pow(std::pow(n, 4) * other, 1.0 / 16);
    case Stack::Kind::Decoder: return std::pow(3.0 * n, 0.25);
  }
  return 1.0;
}

double deepnorm_beta(const Stack& s) {
  const double n = static_cast<double>(s.layers), other = static_cast<double>(s.other_layers);
  switch (s.kind) {
    case Stack::Kind::Single: return std::pow(8.0 * n, -0.25);
    case Stack::Kind::Encoder: return 0.87 * std::pow(std::pow(n, 4) * other, -1.0 / 16);
    case Stack::Kind::Decoder: return std::pow(12.0 * n, -0.25);
  }
  return 1.0;
}

double admin_omega(const Stack& s) {
  const double n = static_cast<double>(s.sublayers() * s.layers);
  return std::sqrt((n + 1.0) / std::log(n + 1.0) - 1.0);
}

// ---- the table ----
namespace {

std::function<Wiring(int64_t, int64_t)> every_layer(Wiring w) {
  return [w](int64_t, int64_t) { return w; };
}

// Mix-LN (Li et al. 2024): Post-LN in the first floor(L / 4) layers, Pre-LN in the rest.
Wiring mix_ln_wiring(int64_t layer, int64_t layers) { return layer < layers / 4 ? Wiring::Post : Wiring::Pre; }

std::deque<PlacementKind> builtin_rows() {
  std::deque<PlacementKind> rows = {
      {NormPlacement::Post, "post", "Post-LN", "Norm(x + f(x)); no final norm (Vaswani 2017, GPT-1, Xiong's Post-LN)",
       every_layer(Wiring::Post), false},
      {NormPlacement::Pre, "pre", "Pre-LN", "x + f(Norm(x)); a final norm (GPT-2, LLaMA)", every_layer(Wiring::Pre),
       true},
      {NormPlacement::None, "none", "none", "x + f(x)", every_layer(Wiring::None), false},
      {NormPlacement::Sandwich, "sandwich", "Sandwich",
       "x + PostNorm(f(Norm(x))); a final norm (Sandwich-LN, Peri-LN)", every_layer(Wiring::Sandwich), true},
      {NormPlacement::DeepNorm, "deepnorm", "DeepNorm",
       "Norm(alpha x + f(x)), v, o and FFN init x beta (DeepNet, Wang et al. 2022)", every_layer(Wiring::Post),
       false, false, deepnorm_alpha, deepnorm_beta},
      {NormPlacement::Admin, "admin", "Admin",
       "Norm(omega x + f(x)) (Admin, Liu et al. 2020, admin-torch's constant omega)", every_layer(Wiring::Post),
       false, false, admin_omega},
      {NormPlacement::MixLn, "mix_ln", "Mix-LN",
       "Post-LN in the first floor(L/4) layers, Pre-LN after; a final norm (Mix-LN, Li et al. 2024)",
       mix_ln_wiring, true},
      {NormPlacement::B2T, "b2t", "B2T",
       "Post-LN, the layer's input u under its last norm: Norm(x + u + f(x)) (B2T, Takase et al. 2022)",
       every_layer(Wiring::Post), false, true},
  };
  return rows;
}

using PlacementTable = RuntimeTable<PlacementKind, NormPlacement, &PlacementKind::placement>;

PlacementTable& table() {
  static PlacementTable t(builtin_rows());
  return t;
}

}  // namespace

std::vector<const PlacementKind*> placement_kinds() { return table().rows(); }

const PlacementKind& placement_kind(NormPlacement placement) {
  const PlacementKind* row = table().at(placement);
  NL_CHECK(row != nullptr, "model", "invalid norm placement {}", static_cast<int>(placement));
  return *row;
}

std::optional<NormPlacement> find_placement_kind(std::string_view name) { return table().find(name); }

std::vector<NamedValue<NormPlacement>> EnumNames<NormPlacement>::runtime_values() { return table().names(); }

NormPlacement register_placement_kind(PlacementKind kind) {
  NL_CHECK(!kind.name.empty() && kind.name.find_first_of(" \t\"'=,") == std::string::npos, "register_placement",
           "a placement's name must be a non-empty word, got '{}'", kind.name);
  NL_CHECK(kind.wiring != nullptr, "register_placement", "placement '{}' needs a wiring per layer", kind.name);
  return table().add(std::move(kind), "register_placement", "placement");
}

Wiring placement_wiring(const PlacementKind& kind, int64_t layer, const Stack& stack) {
  return kind.wiring(layer, stack.layers);
}

double placement_shortcut_scale(const PlacementKind& kind, const Stack& stack) {
  return kind.shortcut_scale ? kind.shortcut_scale(stack) : 1.0;
}

double placement_init_scale(const PlacementKind& kind, const Stack& stack) {
  return kind.init_scale ? kind.init_scale(stack) : 1.0;
}

int64_t norms_of_wiring(Wiring wiring) {
  switch (wiring) {
    case Wiring::Sandwich: return 2;
    case Wiring::None: return 0;
    case Wiring::Post:
    case Wiring::Pre: return 1;
  }
  return 0;
}

Stack single_stack(const ModelConfig& config) { return {Stack::Kind::Single, config.n_layers, 0}; }
Stack encoder_stack(const ModelConfig& config) {
  return {Stack::Kind::Encoder, encoder_layers_of(config), config.n_layers};
}
Stack decoder_stack(const ModelConfig& config) {
  return {Stack::Kind::Decoder, config.n_layers, encoder_layers_of(config)};
}

// ---- applying a row ----

// The order of evaluation is fixed (f(x) before the shortcut), so that the tape, and with it the
// order in which backward sums x's gradients, is the same in every layer that applies a row.
Var apply_sublayer(Wiring wiring, const Var& x, const std::function<Var(const Var&)>& f, const SublayerNorms& norms,
                   double shortcut, const Var& layer_input) {
  switch (wiring) {
    case Wiring::Post: {
      const Var fx = f(x);
      const Var kept = shortcut == 1.0 ? x : scale(x, shortcut);
      return norms.in->forward(residual_add(layer_input.defined() ? residual_add(kept, layer_input) : kept, fx));
    }
    case Wiring::Pre: return residual_add(x, f(norms.in->forward(x)));
    case Wiring::None: return residual_add(x, f(x));
    case Wiring::Sandwich: return residual_add(x, norms.out->forward(f(norms.in->forward(x))));
  }
  fail("model", "invalid wiring {}", static_cast<int>(wiring));
}

PlacedLayer::PlacedLayer(const ModelConfig& config, int64_t layer, const Stack& stack)
    : config_(config),
      layer_(layer),
      kind_(&placement_kind(config.norm_placement)),
      stack_(stack.kind),
      wiring_(placement_wiring(*kind_, layer, stack)),
      shortcut_(placement_shortcut_scale(*kind_, stack)) {}

void PlacedLayer::declare_roles(const std::vector<std::pair<Module*, ParamGroup>>& sublayers) {
  for (const auto& sublayer : sublayers) {
    const ParamGroup group = sublayer.second;
    if (sublayer.first) sublayer.first->edit_roles([group](ParamRole& r) { r.group = group; });
  }
  edit_roles([this](ParamRole& r) {
    r.stack = stack_;
    r.layer = static_cast<int>(layer_);
  });
}

void PlacedLayer::add_sublayer_norms(int64_t sublayers) {
  for (int64_t i = 1; i <= sublayers; ++i) {
    SublayerNorms n;
    if (norms_of_wiring(wiring_) >= 1)
      n.in = register_module("norm" + std::to_string(i), std::make_shared<Norm>(config_, config_.d_model));
    if (norms_of_wiring(wiring_) == 2)
      n.out = register_module("post_norm" + std::to_string(i), std::make_shared<Norm>(config_, config_.d_model));
    norms_.push_back(n);
  }
}

Var PlacedLayer::sublayer(size_t i, const Var& x, const Var& layer_input, const std::function<Var(const Var&)>& f) {
  const bool bottom_to_top = kind_->bottom_to_top && wiring_ == Wiring::Post && i + 1 == norms_.size();
  return apply_sublayer(wiring_, x, f, norms_.at(i), shortcut_, bottom_to_top ? layer_input : Var());
}

}  // namespace normlab
