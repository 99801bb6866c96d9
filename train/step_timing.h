// Timing whole training steps, as `normlab bench train` reports them: W untimed warm-up steps,
// then N timed steps, then one step whose memory is measured (CPU), every one of them the
// trainer's own step (train/train_step.h). Batches are drawn before timing, from the
// training stream the trainer draws (Generator(train.seed), so W + N + 1 <= 16 steps train on
// exactly the trainer's batches) or, without a dataset, uniform random ids of model.vocab_size;
// at most 16 are drawn and reused in turn.
#pragma once
#include <cstdint>
#include <vector>
#include <nlohmann/json.hpp>

#include "core/profiler.h"
#include "data/dataset.h"
#include "config/run_config.h"
#include "train/train_step.h"

namespace normlab {

struct StepTimingOptions {
  int64_t warmup = 3, steps = 20;
  bool profile = true;          // time op families (core/profiler.h)
  bool measure_memory = true;   // one more step, on the CPU, whose memory is measured
};

struct StepTimes {
  std::vector<double> sorted_ms;  // the timed steps, ascending
  double total_ms = 0.0;
  double median_ms = 0.0;
  double last_loss = 0.0;
  ProfileTotals totals;
  nlohmann::ordered_json memory;  // measured_step_memory's record (CPU only)
};

// `dataset` nullptr: random ids. The batches are moved to train.device before timing.
std::vector<Batch> draw_batches(const RunConfig& config, const Dataset* dataset, int64_t count);

// What training must hold at its peak, against what it held (host memory, CPU runs):
//   required = parameters + gradients + optimizer state + the activations the tape keeps for
//   backward (measured as the allocator's growth from before the forward pass to the loss).
// The allocator's peak over the step, and the process's peak RSS, are compared with it, and with
// the estimate train() prints before it starts (train/memory_estimate.h).
nlohmann::ordered_json measured_step_memory(Learner& learner, const RunConfig& config, const Batch& batch,
                                            int64_t step);

StepTimes time_training_steps(const StepTimingOptions& options, const RunConfig& config, const Dataset* dataset,
                              Learner& learner);

double peak_rss_mib();

}  // namespace normlab
