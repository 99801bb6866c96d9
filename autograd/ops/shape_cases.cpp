// Gradient-check cases for the reductions and shape ops. All are linear in x, so a central
// difference is exact up to rounding and a large step (1e-3) keeps rounding small.
#include "autograd/ops.h"
#include "autograd/ops/case_inputs.h"

namespace normlab {

using cases::normal_case;

void register_shape_cases(std::vector<OpCase>& c) {
  constexpr double kLinearStep = 1e-3;
  c.push_back(normal_case("sum", "sum over axis 1 of (3, 4, 5)", {"x"}, {{3, 4, 5}},
                          [](const std::vector<Var>& v) { return sum(v[0], 1); }, kLinearStep, true));
  c.push_back(normal_case("mean", "mean over axis 0 of (3, 4), keepdim", {"x"}, {{3, 4}},
                          [](const std::vector<Var>& v) { return mean(v[0], 0, true); }, kLinearStep,
                          true));
  c.push_back(normal_case("reshape", "(2, 3, 4) -> (4, -1)", {"x"}, {{2, 3, 4}},
                          [](const std::vector<Var>& v) { return reshape(v[0], {v[0].size(-1), -1}); },
                          kLinearStep, true));
  c.push_back(normal_case("transpose", "swap axes 0 and 2 of (2, 3, 4), materialised", {"x"}, {{2, 3, 4}},
                          [](const std::vector<Var>& v) { return transpose(v[0], 0, 2); }, kLinearStep,
                          true));
  c.push_back(normal_case("split_heads", "(B, T, C) = (2, 3, 6) -> (B, H, T, C/H) with H = 2", {"x"},
                          {{2, 3, 6}},
                          [](const std::vector<Var>& v) { return split_heads(v[0], 2); }, kLinearStep,
                          true));
  c.push_back(normal_case("merge_heads", "(B, H, T, D) = (2, 2, 3, 4) -> (B, T, H D)", {"x"},
                          {{2, 2, 3, 4}}, [](const std::vector<Var>& v) { return merge_heads(v[0]); },
                          kLinearStep, true));
  c.push_back(normal_case("narrow_last", "x[..., 1 : C - 1] of (3, 7)", {"x"}, {{3, 7}},
                          [](const std::vector<Var>& v) {
                            return narrow_last(v[0], 1, v[0].size(-1) - 2);
                          },
                          kLinearStep, true));
  {
    // float64 -> float32 -> float64: the identity up to float32's rounding of x (relative 6e-8),
    // so the finite difference over 2h is off by at most ~1.2e-7 / h: h = 1e-2, tolerance 1e-4.
    OpCase cast_case = normal_case("cast", "float64 -> float32 -> float64 of (3, 4) (autocast's op)", {"x"},
                                   {{3, 4}}, [](const std::vector<Var>& v) {
                                     return cast(cast(v[0], DType::F32), DType::F64);
                                   },
                                   1e-2, true);
    cast_case.options.tolerance = 1e-4;
    c.push_back(cast_case);
  }
}

}  // namespace normlab
