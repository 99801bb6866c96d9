#include "xiong/arms.h"

#include <algorithm>

#include <fmt/format.h>

#include "config/config.h"
#include "optim/schedule.h"

namespace normlab::xiong {

std::vector<TrainPoint> with_seeds(const std::vector<TrainPoint>& arms, const std::vector<int>& seeds) {
  std::vector<TrainPoint> points;
  for (TrainPoint a : arms)
    for (const int seed : seeds) {
      a.seed = seed;
      points.push_back(a);
    }
  return points;
}

RunConfig point_config(const std::string& base_path, const TrainPoint& point) {
  std::vector<std::string> overrides;
  for (const auto& [key, value] : point.sweep_point().overrides) {
    if (key == "seed") {
      overrides.push_back("train.seed=" + value);
      overrides.push_back("model.seed=" + value);
    } else {
      const bool text = key == "model.norm_placement" || key == "model.norm_type" || key == "optim.name" ||
                        key == "model.embedding_scale" || key == "train.precision";
      overrides.push_back(key + "=" + (text ? "\"" + value + "\"" : value));
    }
  }
  return load_config(base_path, overrides);
}

double cumulative_lr(const RunConfig& config) {
  double total = 0;
  for (int64_t step = 0; step < config.train.steps; ++step)
    total += learning_rate(config.schedule, config.optim.lr, step, config.train.steps);
  return total;
}

std::string schedule_words(const ScheduleConfig& s) {
  const int64_t warmup = s.warmup_steps;
  const std::string ramp = warmup > 1 ? fmt::format("linear warmup over {} steps", warmup) : "";
  if (s.kind != ScheduleKind::InverseSqrt) {
    const std::string after = s.kind == ScheduleKind::Constant ? "constant lr_max"
                                                               : fmt::format("{} decay to {}", enum_name(s.kind), s.min_lr);
    return ramp.empty() ? after : ramp + ", then " + after;
  }
  const int64_t start = std::max<int64_t>({warmup, s.decay_start, 1});
  const std::string per = s.decay_every == 1 ? "t" : fmt::format("ceil(t / {}) epochs", s.decay_every);
  const std::string law = s.decay_every == 1 ? fmt::format("sqrt({} / t)", start)
                                             : fmt::format("sqrt({} / {})", std::max<int64_t>(1, start / s.decay_every), per);
  if (start == 1) return "fairseq's inverse_sqrt with T_warmup = 1: lr_max " + law + " from t = 1";
  std::string words = ramp.empty() ? "lr_max from t = 1" : ramp;
  if (start > std::max<int64_t>(warmup, 1)) words += fmt::format("{} lr_max to t = {}", ramp.empty() ? "" : ",", start);
  if (ramp.empty() && start > 1) words = fmt::format("lr_max to t = {}", start);
  if (s.decay_factor != 1.0) return words + fmt::format(", then x{:g}: {:g} lr_max {}", s.decay_factor, s.decay_factor, law);
  return words + ", then lr_max " + law;
}

}  // namespace normlab::xiong
