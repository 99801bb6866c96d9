// The tape (a Wengert list): while grad mode is on, every differentiable op whose inputs include a
// Var that requires grad appends one Node: the op's name, its inputs, its output, and a backward
// function that maps d(output) to d(each input) using only what the op chose to save.
// backward(loss) seeds d(loss) = 1 and replays the nodes in reverse order.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "autograd/var.h"

namespace normlab {

// Gradients for each input of a node, in input order; an undefined Tensor means "no gradient"
// (the input does not require one). Shapes must equal the inputs' shapes.
using Grads = std::vector<Tensor>;
using BackwardFn = std::function<Grads(const Tensor& d_output)>;

struct Node {
  const char* op = "";
  const char* scope = "";  // the module that recorded it ("blocks.3.attn.q"), see ScopeGuard
  std::vector<Var> inputs;
  Var output;
  BackwardFn backward;  // empty: the op has no backward, and reaching it throws
};

class Tape {
 public:
  static Tape& current();  // thread-local
  void push(Node node) { nodes_.push_back(std::move(node)); }
  size_t size() const { return nodes_.size(); }
  void clear() { nodes_.clear(); }
  std::vector<Node>& nodes() { return nodes_; }

 private:
  std::vector<Node> nodes_;
};

bool grad_enabled();

// RAII: nothing is recorded while one is alive (evaluation, optimizer steps, weight init).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// Scopes name where in a model an op was recorded: nn modules hold a ScopeGuard with their dotted
// path ("blocks.3.attn.q") while they run, and every Node keeps the innermost one (anomaly mode
// reports it). A scope is an interned string that lives as long as the program, so holding and
// keeping one costs a pointer copy. autograd knows no modules: nn chooses the names.
const char* intern_scope(const std::string& name);
const char* current_scope();  // "" outside every scope

class ScopeGuard {
 public:
  explicit ScopeGuard(const char* scope);  // an interned scope (intern_scope)
  ~ScopeGuard();
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;

 private:
  const char* previous_;
};

// Wraps a forward result: when grad mode is on and any input requires grad, records a Node and
// returns an output that requires grad; otherwise returns a plain constant. `backward` may be
// empty for ops without a derivative (backward() then throws naming the op).
Var record(const char* op, std::vector<Var> inputs, Tensor output, BackwardFn backward);

// Reverse-mode sweep from a scalar `loss` (d loss = 1), or with an explicit seed gradient.
// Accumulates into leaves' grad, frees intermediates, clears the tape.
void backward(const Var& loss);
void backward(const Var& output, const Tensor& seed);

}  // namespace normlab
