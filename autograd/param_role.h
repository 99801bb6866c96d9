// A parameter's role: what it is and where it sits in a model. The nn module that registers a
// parameter declares its kind (nn/layers.cpp, nn/norms.cpp), and the modules that place it add
// where (an attention's output projection, a block's layer, a model's head). Init (nn/init.cpp),
// weight decay (optim/optimizer.cpp), learning-rate multipliers (optim/lr_multipliers.cpp), the
// run files' per-layer columns (train/run_dir.cpp) and the dynamics log read it; none of them
// parses a parameter's name. autograd only carries it on the Var.
#pragma once
#include <array>
#include <cstdint>

#include "core/named_enum.h"

namespace normlab {

enum class ParamKind : uint8_t { Matrix, Bias, NormParam, TokenEmbedding, PositionEmbedding };

// The groups schedule.warmup_groups names: the sub-layer or model part a parameter belongs to.
enum class ParamGroup : uint8_t { None, Attention, CrossAttention, Ffn, Norms, Embeddings, Head };

// Which stack a layer belongs to: a decoder-only or encoder-only model's one stack ("blocks.N"),
// an encoder-decoder's encoder or decoder. The order is the run files' column order.
enum class LayerStack : uint8_t { Single, Encoder, Decoder };

struct ParamRole {
  ParamKind kind = ParamKind::Matrix;
  ParamGroup group = ParamGroup::None;
  double norm_initial = 0.0;      // NormParam: its value at initialization (its norm kind's row)
  bool residual_output = false;   // attention's o, the FFN's w2: GPT-2's init divides their std by sqrt(2L)
  bool placement_scaled = false;  // the FFN's matrices, attention's v and o: a placement's init scale multiplies them
  LayerStack stack = LayerStack::Single;
  int layer = -1;                 // its layer's index in `stack`; -1 outside every layer (embeddings, final norm, head)
};

template <> struct EnumNames<ParamGroup> {
  static constexpr std::array<NamedValue<ParamGroup>, 7> values{{{ParamGroup::None, ""},
                                                                 {ParamGroup::Attention, "attention"},
                                                                 {ParamGroup::CrossAttention, "cross_attention"},
                                                                 {ParamGroup::Ffn, "ffn"},
                                                                 {ParamGroup::Norms, "norms"},
                                                                 {ParamGroup::Embeddings, "embeddings"},
                                                                 {ParamGroup::Head, "head"}}};
};

}  // namespace normlab
