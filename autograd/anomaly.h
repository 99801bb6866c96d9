// Anomaly mode (as torch.autograd.detect_anomaly): while an AnomalyModeGuard is alive, every op
// recorded through record() has its output checked for inf/NaN as it is made, and backward()
// checks every gradient it computes; the FIRST tensor that holds one stops the computation with
// an AnomalyError naming the op, the scope (layer) that recorded it, the parameters among its
// inputs, and the dtypes and shapes of its inputs and output. Off (the default), each op pays
// one branch on a thread-local flag and nothing is checked.
//
// Forward: an op's output is checked whether or not it is recorded on the tape (constants too).
// Backward: the gradient arriving at an op's output (summed over its uses, so a sum of finite
// parts can overflow) and each input gradient the op's backward returns.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "autograd/tape.h"
#include "core/error.h"

namespace normlab {

// A tensor as an anomaly report describes it: counts of inf and NaN only when it is not finite.
struct AnomalyTensor {
  std::string name;  // a parameter's name ("blocks.1.attn.q.weight"), else ""
  DType dtype = DType::F32;
  Shape shape;
  bool finite = true;
  int64_t inf_count = 0, nan_count = 0;
  std::string str() const;  // "blocks.1.attn.q.weight float32 (32, 32) finite"
};

struct AnomalyRecord {
  std::string phase;         // "forward" | "backward"
  std::string op;            // the op's name on the tape: "linear", "sqrt"
  std::string scope;         // the module that recorded it ("blocks.1.attn.q"); "" outside any
  std::vector<std::string> parameters;  // the parameters among its inputs
  std::vector<AnomalyTensor> inputs;
  AnomalyTensor output;      // forward: the bad tensor; backward: the op's forward output
  // backward: the input whose computed gradient holds inf/NaN; -1 when the gradient arriving at
  // the op's output (d_output) already did
  int gradient_of = -1;
  AnomalyTensor gradient;    // backward: the bad gradient
  std::string message() const;  // "[anomaly] forward: op 'linear' in blocks.1.attn.q ..."
};

struct AnomalyError : Error {
  explicit AnomalyError(AnomalyRecord r) : Error(r.message()), record(std::move(r)) {}
  AnomalyRecord record;
};

bool anomaly_mode_enabled();
// Tensors checked on this thread since it started (tests and benchmarks read it).
int64_t anomaly_checks();

// RAII: anomaly mode on (or off, with enabled = false) while it is alive; nests like NoGradGuard.
class AnomalyModeGuard {
 public:
  explicit AnomalyModeGuard(bool enabled = true);
  ~AnomalyModeGuard();
  AnomalyModeGuard(const AnomalyModeGuard&) = delete;
  AnomalyModeGuard& operator=(const AnomalyModeGuard&) = delete;

 private:
  bool previous_;
};

// Called by record() and backward() only while anomaly mode is on; throw AnomalyError.
void check_forward_output(const char* op, const std::vector<Var>& inputs, const Tensor& output);
void check_backward_output_grad(const Node& node, const Tensor& d_output);
void check_backward_grads(const Node& node, const std::vector<Tensor>& grads);

}  // namespace normlab
