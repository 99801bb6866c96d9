// Where the norms sit, in one table (one row per value of model.norm_placement). The decoder-only
// blocks (nn/block.h) and the encoder-decoder's layers (nn/seq2seq_layer.h) apply a row the same
// way, sub-layer by sub-layer; the initialisation (nn/init.cpp) and the memory estimate
// (train/memory_estimate.cpp) read it too. Adding a placement is a row in nn/placement.cpp or, at
// run time, one call of register_placement_kind (Python's normlab.register_placement).
//
// A row says, for each layer of a stack, how its sub-layers (self-attention, cross-attention, FFN)
// join the residual stream x, by their wiring:
//   post:      Norm(a x + f(x))                 a: the row's shortcut scale (1 unless it has one)
//   pre:       x + f(Norm(x))
//   none:      x + f(x)
//   sandwich:  x + PostNorm(f(Norm(x)))
// With bottom_to_top (B2T, Takase et al. 2022), the last sub-layer of a post-wired layer also adds
// the layer's input u under its norm: Norm(x + u + f(x)). The row also says whether a final norm
// follows each stack, and the shortcut scale a and an init scale b (which multiplies the initial
// standard deviation of attention's value and output matrices and the FFN's), both functions of
// the stacks' depths, so that DeepNorm and Admin hold in an encoder-decoder as in one stack.
//
// Norms of sub-layer i (1-based) are children "norm<i>" (post, pre, sandwich's input) and
// "post_norm<i>" (sandwich's output), registered in that order before the sub-layers.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autograd/var.h"
#include "nn/model_config.h"
#include "nn/module.h"
#include "nn/norms.h"

namespace normlab {

enum class Wiring { Post, Pre, None, Sandwich };
template <> struct EnumNames<Wiring> {
  static constexpr std::array<NamedValue<Wiring>, 4> values{
      {{Wiring::Post, "post"}, {Wiring::Pre, "pre"}, {Wiring::None, "none"}, {Wiring::Sandwich, "sandwich"}}};
};

// The stack a layer belongs to: its depth and kind, and for an encoder-decoder the other stack's
// depth (the DeepNet constants depend on both).
struct Stack {
  using Kind = LayerStack;  // Single: decoder-only or encoder-only
  Kind kind = Kind::Single;
  int64_t layers = 0;        // this stack's depth
  int64_t other_layers = 0;  // an encoder-decoder's other stack (0 for Single)
  int64_t sublayers() const { return kind == Kind::Decoder ? 3 : 2; }
};

struct PlacementKind {
  NormPlacement placement{};  // set by the table: a built-in row's enum value, or the next free id
  std::string name;           // the config value of model.norm_placement
  std::string label;          // for tables and plots: "Post-LN"
  std::string formula;        // one line, for docs and error messages
  // The wiring of layer `layer` (0-based) of a stack of `layers`.
  std::function<Wiring(int64_t layer, int64_t layers)> wiring;
  bool final_norm = false;     // a norm after each stack (final_norm; encoder_norm, decoder_norm)
  bool bottom_to_top = false;  // B2T: the layer's input joins its last post-wired sub-layer's sum
  std::function<double(const Stack&)> shortcut_scale;  // a; empty: 1
  std::function<double(const Stack&)> init_scale;      // b; empty: 1
};

// Every row: the built-in ones in NormPlacement order, then those registered at run time.
std::vector<const PlacementKind*> placement_kinds();
// Throws "[model] invalid norm placement <id>" for an id no row has.
const PlacementKind& placement_kind(NormPlacement placement);
// The row a config names; a name registered twice means its latest row.
std::optional<NormPlacement> find_placement_kind(std::string_view name);
// Adds a row at run time and returns its value. The name must not be a built-in one; registering
// a name again adds a new row that the name then means. Throws "[register_placement] ..." on a
// row without a name or a wiring.
NormPlacement register_placement_kind(PlacementKind kind);

// The row's values for layer `layer` of `stack`.
Wiring placement_wiring(const PlacementKind& kind, int64_t layer, const Stack& stack);
double placement_shortcut_scale(const PlacementKind& kind, const Stack& stack);
double placement_init_scale(const PlacementKind& kind, const Stack& stack);
// The norms one sub-layer with this wiring owns: sandwich 2, none 0, post and pre 1.
int64_t norms_of_wiring(Wiring wiring);

// The stacks of a model: the one stack of a decoder or encoder, or an encoder-decoder's two.
Stack single_stack(const ModelConfig& config);
Stack encoder_stack(const ModelConfig& config);
Stack decoder_stack(const ModelConfig& config);

// One sub-layer's norms: `in` ("norm<i>") and `out` ("post_norm<i>"), either possibly null.
struct SublayerNorms {
  std::shared_ptr<Norm> in, out;
};

// Sub-layer f on the stream x (B,T,C) -> (B,T,C) under `wiring`; `shortcut` is the row's scale a.
// `layer_input`: defined only for a B2T layer's last sub-layer, the layer's input u.
Var apply_sublayer(Wiring wiring, const Var& x, const std::function<Var(const Var&)>& f, const SublayerNorms& norms,
                   double shortcut, const Var& layer_input = Var());

// A layer whose sub-layers sit in the config's placement row: the decoder-only Block and the
// encoder-decoder's layers derive from it, so both apply a row the same way.
class PlacedLayer : public Module {
 public:
  Wiring wiring() const { return wiring_; }
  double shortcut_scale() const { return shortcut_; }

 protected:
  PlacedLayer(const ModelConfig& config, int64_t layer, const Stack& stack);
  // Registers the norms of `sublayers` sub-layers ("norm1", ["post_norm1"], "norm2", ...).
  void add_sublayer_norms(int64_t sublayers);
  // Declares where this layer's parameters sit (autograd/param_role.h): all of them in this layer of
  // its stack, each listed sub-layer's in its group. Derived layers call it last in their constructor.
  void declare_roles(const std::vector<std::pair<Module*, ParamGroup>>& sublayers);
  // Sub-layer i (0-based) of this layer on x; `layer_input` is the layer's input (B2T reads it).
  Var sublayer(size_t i, const Var& x, const Var& layer_input, const std::function<Var(const Var&)>& f);

  ModelConfig config_;
  int64_t layer_;

 private:
  const PlacementKind* kind_;
  LayerStack stack_;
  Wiring wiring_;
  double shortcut_;
  std::vector<SublayerNorms> norms_;
};

// DeepNet's constants (Wang et al. 2022, their Table 1) and Admin's omega (Liu et al. 2020, the
// constant of admin-torch) for a stack: see nn/placement.cpp.
double deepnorm_alpha(const Stack& stack);
double deepnorm_beta(const Stack& stack);
double admin_omega(const Stack& stack);

}  // namespace normlab
