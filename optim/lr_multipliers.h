// Per-parameter learning-rate multipliers: the interventions that ask where warmup matters
// (issue 38). The optimizer's step rate for parameter p is lr(step) * multiplier(p, step).
//   layer scale ("optim.layer_lr_scale"): "" = 1 everywhere; "top_half:X" or "bottom_half:X" = X
//     for the parameters of the top (or bottom) half of the blocks (blocks.N.*, N counted from 0
//     next to the embeddings; an odd middle block belongs to neither half), 1 elsewhere;
//     "x1,x2,...,xL" = one factor per block, layer 1 first. Parameters outside the blocks
//     (embeddings, final norm, head) get 1. Factors are >= 0.
//   warmup groups ("schedule.warmup_groups"): "" = every parameter follows the schedule's warmup;
//     else a comma list of groups (attention, cross_attention, ffn, norms, embeddings, head, and top_half /
//     bottom_half: the blocks of that half, as the layer scale's halves): those follow it, and
//     every other parameter gets at each step the rate of the same schedule with no warmup,
//     r0(step) / r(step) as its multiplier (r0: warmup_steps = 0).
// Groups and blocks by parameter role (autograd/param_role.h): a sub-layer's parameters are in its
// group (attention, cross_attention, ffn; an attention's QK-norm is attention), the other norms in
// norms, token and position tables in embeddings, an untied lm_head in head (a tied head is the
// embedding). Only a single stack's layers (blocks.N) have a layer scale and halves.
// Errors start with "[lr_multipliers]" and name the text and the key it came from.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "autograd/var.h"
#include "optim/schedule.h"

namespace normlab {

// The factor of each block (n_layers of them) from a layer-scale text; throws on a malformed one.
std::vector<double> parse_layer_lr_scale(const std::string& text, int64_t n_layers);
// The groups of a warmup-groups text, each checked against the known names; throws otherwise.
std::vector<std::string> parse_warmup_groups(const std::string& text);
// The group of a parameter ("" when none of the groups above).
std::string parameter_group(const Var& param);

struct LrMultiplierSpec {
  std::string layer_scale;    // optim.layer_lr_scale
  std::string warmup_groups;  // schedule.warmup_groups
  int64_t n_layers = 0;
  bool active() const { return !layer_scale.empty() || !warmup_groups.empty(); }
};

// The multiplier of each named parameter at `step` (0-based, as learning_rate's).
std::vector<double> lr_multipliers(const std::vector<Var>& params, const LrMultiplierSpec& spec,
                                   const ScheduleConfig& schedule, double lr_max, int64_t step, int64_t total_steps);

}  // namespace normlab
