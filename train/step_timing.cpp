#include "train/step_timing.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>

#include "core/backend.h"
#include "train/memory_estimate.h"

namespace normlab {

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

std::vector<Batch> draw_batches(const RunConfig& config, const Dataset* dataset, int64_t count) {
  Generator gen(config.train.seed);  // the trainer's data stream
  const int64_t b = config.train.batch_size, t = config.train.context, v = config.model.vocab_size;
  std::vector<Batch> batches;
  for (int64_t i = 0; i < count; ++i) {
    if (dataset) {
      batches.push_back(dataset->sample(false, b, t, gen));
    } else {
      std::vector<int32_t> ids(static_cast<size_t>(b * t)), targets(ids.size());
      for (auto& id : ids) id = static_cast<int32_t>(gen.below(static_cast<uint64_t>(v)));
      for (auto& id : targets) id = static_cast<int32_t>(gen.below(static_cast<uint64_t>(v)));
      batches.push_back({Tensor::from_ints(ids, {b, t}), Tensor::from_ints(targets, {b, t})});
    }
    batches.back().inputs = batches.back().inputs.to(config.train.device);
    batches.back().targets = batches.back().targets.to(config.train.device);
  }
  return batches;
}

nlohmann::ordered_json measured_step_memory(Learner& learner, const RunConfig& config, const Batch& batch,
                                            int64_t step) {
  double param_bytes = 0, state_bytes = 0;
  for (const auto& [name, p] : learner.model.named_parameters()) param_bytes += static_cast<double>(p.value().nbytes());
  for (const auto& [name, t] : learner.optimizer.state()) state_bytes += static_cast<double>(t.nbytes());
  const double before = static_cast<double>(host_memory_stats().in_use);
  reset_host_memory_peak();
  double activations = 0.0;
  StepHooks hooks;
  hooks.after_forward = [&] { activations = static_cast<double>(host_memory_stats().in_use) - before; };
  train_step(learner, config, batch, step, single_process(), hooks);
  const double peak = static_cast<double>(host_memory_stats().peak);
  const double mib = 1.0 / (1024.0 * 1024.0);
  const double required = 2 * param_bytes + state_bytes + activations;
  const double estimate = estimate_training_memory(config).total();
  return {{"params_mib", param_bytes * mib},          {"grads_mib", param_bytes * mib},
          {"optimizer_state_mib", state_bytes * mib}, {"activations_mib", activations * mib},
          {"required_mib", required * mib},           {"allocator_peak_mib", peak * mib},
          {"peak_rss_mib", peak_rss_mib()},            {"allocator_peak_over_required", peak / required},
          {"rss_over_required", peak_rss_mib() / (required * mib)},
          {"estimate_mib", estimate * mib},            {"estimate_over_allocator_peak", estimate / peak}};
}

StepTimes time_training_steps(const StepTimingOptions& opt, const RunConfig& config, const Dataset* dataset,
                              Learner& learner) {
  const bool memory = opt.measure_memory && config.train.device.kind == DeviceKind::CPU;
  const std::vector<Batch> batches = draw_batches(config, dataset, std::min<int64_t>(opt.warmup + opt.steps + 1, 16));
  const auto batch_of = [&](int64_t step) -> const Batch& { return batches[static_cast<size_t>(step) % batches.size()]; };
  int64_t step = 0;
  for (int64_t i = 0; i < opt.warmup; ++i, ++step) train_step(learner, config, batch_of(step), step);
  profiler_reset();
  profiler_enable(opt.profile);
  StepTimes r;
  for (int64_t i = 0; i < opt.steps; ++i, ++step) {
    const auto start = std::chrono::steady_clock::now();
    r.last_loss = train_step(learner, config, batch_of(step), step).loss;
    r.sorted_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  profiler_enable(false);
  r.totals = profiler_totals();
  if (memory) r.memory = measured_step_memory(learner, config, batch_of(step), step);
  for (double m : r.sorted_ms) r.total_ms += m;
  std::sort(r.sorted_ms.begin(), r.sorted_ms.end());
  const size_t n = r.sorted_ms.size();
  r.median_ms = n % 2 ? r.sorted_ms[n / 2] : 0.5 * (r.sorted_ms[n / 2 - 1] + r.sorted_ms[n / 2]);
  return r;
}

}  // namespace normlab
