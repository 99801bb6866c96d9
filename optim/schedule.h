// Learning-rate schedules as pure functions lr(step), step = 0, 1, 2, ... (the step being taken).
//   warmup: lr = lr_max * (step + 1) / warmup_steps for step < warmup_steps (never 0), 0 = no warmup
//   then "constant": lr_max
//        "inverse_sqrt": lr_max * min(1, sqrt(max(1, warmup / E) / ceil((step + 1) / E))), E = decay_every:
//            the inverse square root of the number of epochs of E steps begun. E = 1 is fairseq's
//            per-update decay lr_max * sqrt(warmup / (step + 1)); E > 1 decays once per epoch, so
//            without warmup the whole first epoch runs at lr_max (Xiong et al.'s no-warmup runs).
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
  double min_lr = 0.0;
};

// total_steps: the run's length (decay schedules end there).
double learning_rate(const ScheduleConfig& schedule, double lr_max, int64_t step, int64_t total_steps);

}  // namespace normlab
