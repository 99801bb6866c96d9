// What an arm of the suite's training grid does to the learning rate: the run's resolved config
// (the base TOML plus the arm's overrides), its schedule in words and its cumulative learning rate,
// so that every table can show how much learning each arm had.
#pragma once
#include <string>
#include <vector>

#include "config/run_config.h"
#include "xiong/grids.h"

namespace normlab::xiong {

// load_config(base_path) with `point`'s overrides applied (its seeds too).
RunConfig point_config(const std::string& base_path, const TrainPoint& point);

// Each arm once per seed, arm by arm (a grid's points: arms x seeds).
std::vector<TrainPoint> with_seeds(const std::vector<TrainPoint>& arms, const std::vector<int>& seeds);

// The sum over the run's steps of the learning rate (t = 1 .. steps): the area under the schedule.
double cumulative_lr(const RunConfig& config);

// The schedule in words, with t the update being taken (1, 2, ...): "linear warmup over 400
// steps, then lr_max sqrt(400 / t)", "lr_max to t = 400, then lr_max sqrt(400 / t)", "fairseq's
// inverse_sqrt with T_warmup = 1: lr_max sqrt(1 / t) from t = 1", "lr_max to t = 800, then x0.1:
// 0.1 lr_max sqrt(800 / t)".
std::string schedule_words(const ScheduleConfig& schedule);

}  // namespace normlab::xiong
