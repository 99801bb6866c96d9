// Small helpers for the gradient-check case files of the shape, product and softmax/loss families:
// float64 N(0, 1) inputs of fixed shapes from a seed, and a case with every input differentiable.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "autograd/gradcheck.h"
#include "core/random.h"

namespace normlab::cases {

// Inputs of the given shapes drawn N(0, 1) in float64; a non-empty hint replaces shapes[0] when
// `hint_first` (cases whose other inputs do not depend on the first's shape).
inline std::vector<Tensor> normal_inputs(uint64_t seed, const Shape& hint, std::vector<Shape> shapes,
                                         bool hint_first) {
  if (hint_first && !hint.empty()) shapes[0] = hint;
  Generator gen(seed);
  std::vector<Tensor> t;
  for (const Shape& s : shapes) t.push_back(Tensor::randn(s, gen, 0.0, 1.0, DType::F64));
  return t;
}

// A case over N(0, 1) inputs of `shapes`, all differentiable, checked with finite-difference `step`.
inline OpCase normal_case(std::string name, std::string description,
                          std::vector<std::string> input_names, std::vector<Shape> shapes, GradFn fn,
                          double step, bool hint_first = false) {
  OpCase c;
  c.name = std::move(name);
  c.description = std::move(description);
  for (size_t i = 0; i < input_names.size(); ++i) c.differentiable.push_back(static_cast<int>(i));
  c.input_names = std::move(input_names);
  c.make_inputs = [shapes, hint_first](uint64_t seed, const Shape& hint) {
    return normal_inputs(seed, hint, shapes, hint_first);
  };
  c.fn = std::move(fn);
  c.options.step = step;
  return c;
}

}  // namespace normlab::cases
