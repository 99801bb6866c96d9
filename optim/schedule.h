// Learning-rate schedules as pure functions lr(step), step = 0, 1, 2, ... (the step being taken).
//   warmup: lr = lr_max * (step + 1) / warmup_steps for step < warmup_steps (never 0), 0 = no warmup
//   then "constant": lr_max
//        "inverse_sqrt": lr_max * f * min(1, sqrt(max(1, D / E) / ceil((step + 1) / E))), E = decay_every,
//            D = max(warmup, decay_start, 1): the inverse square root of the number of epochs of E
//            steps begun, counted from D. E = 1, decay_start = 0 is fairseq's per-update decay
//            lr_max * sqrt(warmup / (step + 1)). decay_start D > warmup holds lr_max from the end
//            of warmup to step D, so arms with different warmups follow one curve after D (a
//            contrast of the warmup phase alone). f = decay_factor once step + 1 > D (else 1): a
//            drop at D (Xiong et al.'s section 4: lr_max, x0.1 at a fixed step, then decay).
//        "linear": linear decay from lr_max to min_lr at total_steps
//        "cosine": cosine decay from lr_max to min_lr at total_steps
#pragma once
#include <cstdint>
#include <string>

#include "core/named_enum.h"

namespace normlab {

enum class ScheduleKind { Constant, InverseSqrt, Linear, Cosine };
template <> struct EnumNames<ScheduleKind> {
  static constexpr std::array<NamedValue<ScheduleKind>, 4> values{{{ScheduleKind::Constant, "constant"},
                                                                    {ScheduleKind::InverseSqrt, "inverse_sqrt"},
                                                                    {ScheduleKind::Linear, "linear"},
                                                                    {ScheduleKind::Cosine, "cosine"}}};
};

struct ScheduleConfig {
  ScheduleKind kind = ScheduleKind::Constant;
  int64_t warmup_steps = 0;
  int64_t decay_every = 1;  // InverseSqrt: steps per decay unit (an "epoch")
  int64_t decay_start = 0;  // InverseSqrt: the decay starts after max(warmup_steps, decay_start) steps
  double decay_factor = 1.0;  // InverseSqrt: the rate is multiplied by this after decay_start
  double min_lr = 0.0;
  std::string warmup_groups;  // "" = every parameter warms up; else only these groups (optim/lr_multipliers.h)
};

// total_steps: the run's length (decay schedules end there).
double learning_rate(const ScheduleConfig& schedule, double lr_max, int64_t step, int64_t total_steps);

}  // namespace normlab
