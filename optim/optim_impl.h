// Internals shared by the optimizers (not part of the optim API): the per-optimizer factories
// make_optimizer() dispatches to, and ParamSlots, the named per-parameter buffers ("m", "v",
// "momentum", ...) with their checkpoint form "<slot>.<param name>".
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/tape.h"
#include "optim/optimizer.h"

namespace normlab {

using NamedParams = std::vector<std::pair<std::string, Var>>;
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

std::unique_ptr<Optimizer> make_sgd(const OptimConfig& config, NamedParams params);
std::unique_ptr<Optimizer> make_adam(const OptimConfig& config, NamedParams params, bool decoupled);
std::unique_ptr<Optimizer> make_radam(const OptimConfig& config, NamedParams params);

// One buffer per (slot, parameter), allocated as zeros like the parameter on first use, plus a
// per-parameter step count (bias corrections count the steps a parameter actually took, so one
// that first receives a gradient late is not mis-corrected). State keys: "<slot>.<param name>"
// and "step.<param name>" (a float64 scalar).
class ParamSlots {
 public:
  ParamSlots(std::string optimizer, std::vector<std::string> slots, const NamedParams& params,
             bool count_steps);
  // The buffer of `slot` for parameter `index`, zero-initialised on first use.
  Tensor& get(size_t slot, size_t index, const Var& param);
  // Increments and returns parameter `index`'s own step count (1-based).
  int64_t next_step(size_t index) { return ++steps_[index]; }
  void append_state(const NamedParams& params, NamedTensors& out) const;
  // Replaces every buffer by the state's (missing ones restart from zero). Checks the whole state
  // first and changes nothing when it throws: naming the key for an unknown slot or parameter, a
  // key given twice, a shape or dtype that differs from the parameter's, or a step count that is
  // not a whole number in [0, global_steps].
  void load(const NamedParams& params, const NamedTensors& state, int64_t global_steps);

 private:
  std::string optimizer_;
  std::vector<std::string> slots_;
  bool count_steps_;
  std::vector<std::vector<Tensor>> buffers_;  // [slot][param]
  std::vector<int64_t> steps_;
};

// An optimizer whose whole state lives in ParamSlots: state() and load_state() are written once here.
class SlotOptimizer : public Optimizer {
 public:
  NamedTensors state() const override {
    NamedTensors out;
    slots_.append_state(params_, out);
    return out;
  }
  void load_state(const NamedTensors& state, int64_t steps) override {
    slots_.load(params_, state, steps);
    steps_ = steps;
  }

 protected:
  SlotOptimizer(NamedParams params, std::string name, std::vector<std::string> slots, bool count_steps)
      : Optimizer(std::move(params)), slots_(std::move(name), std::move(slots), params_, count_steps) {}
  ParamSlots slots_;
};

// The gradient of `param` ready for a kernel (contiguous, checked against the value), or an
// undefined tensor when the parameter has none (it is then skipped).
Tensor grad_for_update(const Var& param, const std::string& name, const char* optimizer);

}  // namespace normlab
