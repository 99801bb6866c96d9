// Learning-rate schedules (formulas in optim/schedule.h). Conventions:
//  * warmup counts the step being taken, so step 0 gets lr_max / warmup_steps (never 0) and the
//    last warmup step (warmup_steps - 1) gets exactly lr_max;
//  * "inverse_sqrt" with decay_every E = 1: lr_max sqrt(w / (step + 1)) with w = max(warmup_steps, 1),
//    so it is lr_max at the end of warmup and lr_max / 2 at step + 1 = 4 w; without warmup it starts
//    at lr_max; decay_start D > warmup moves that point to D (lr_max up to step + 1 = D, then
//    lr_max sqrt(D / (step + 1)), times decay_factor from step + 1 = D + 1 on). With E > 1 the same law is applied to epochs of E steps: lr_max sqrt(max(1, w / E) /
//    e), e = ceil((step + 1) / E) the epoch being run (1, 2, ...), capped at lr_max;
//  * "linear"/"cosine" decay over progress = (step - warmup) / (total - warmup), from lr_max at the
//    end of warmup to min_lr at step == total_steps (so every step taken, 0 .. total - 1, has
//    lr > min_lr), clamped to min_lr beyond.
#include "optim/schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.h"

namespace normlab {

double learning_rate(const ScheduleConfig& schedule, double lr_max, int64_t step, int64_t total_steps) {
  const ScheduleKind kind = schedule.kind;
  const int64_t warmup = schedule.warmup_steps;
  NL_CHECK(warmup >= 0, "schedule", "warmup_steps must be >= 0, got {}", warmup);
  NL_CHECK(step >= 0, "schedule", "step must be >= 0, got {}", step);
  const bool decays = kind == ScheduleKind::Linear || kind == ScheduleKind::Cosine;
  NL_CHECK(!decays || total_steps > warmup, "schedule",
           "'{}' needs total_steps > warmup_steps, got total_steps {} and warmup_steps {}", enum_name(kind),
           total_steps, warmup);

  if (step < warmup) return lr_max * static_cast<double>(step + 1) / static_cast<double>(warmup);
  if (kind == ScheduleKind::Constant) return lr_max;
  if (kind == ScheduleKind::InverseSqrt) {
    const int64_t every = schedule.decay_every;
    NL_CHECK(every >= 1, "schedule", "decay_every must be >= 1, got {}", every);
    NL_CHECK(schedule.decay_start >= 0 && schedule.decay_factor > 0, "schedule",
             "decay_start must be >= 0 and decay_factor > 0, got {} and {}", schedule.decay_start,
             schedule.decay_factor);
    const int64_t start = std::max<int64_t>({warmup, schedule.decay_start, 1});
    const double start_epochs = std::max(1.0, static_cast<double>(start) / static_cast<double>(every));
    const double epoch = static_cast<double>(step / every + 1);  // ceil((step + 1) / every)
    const double factor = step + 1 > start ? schedule.decay_factor : 1.0;
    return lr_max * factor * std::min(1.0, std::sqrt(start_epochs / epoch));
  }
  const double progress = std::clamp(
      static_cast<double>(step - warmup) / static_cast<double>(total_steps - warmup), 0.0, 1.0);
  const double min_lr = schedule.min_lr;
  if (kind == ScheduleKind::Linear) return lr_max + (min_lr - lr_max) * progress;
  return min_lr + 0.5 * (lr_max - min_lr) * (1.0 + std::cos(std::numbers::pi * progress));
}

}  // namespace normlab
