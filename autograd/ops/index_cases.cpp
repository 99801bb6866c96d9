// Gradient-check cases for the index moves. Both are linear in x, so a central difference is exact
// up to rounding; a large step (1e-3) keeps rounding small. The indices repeat on purpose (a repeat
// must sum in the backward) and leave an entry unnamed (its gradient must be exactly 0).
#include "autograd/ops.h"
#include "autograd/ops/case_inputs.h"

namespace normlab {

using cases::normal_case;

void register_index_cases(std::vector<OpCase>& c) {
  constexpr double kLinearStep = 1e-3;
  {
    // Row 1 takes column 2 twice; column 4 is never taken in row 0.
    const Tensor idx = Tensor::from_ints({3, 0, 2, 2, 4, 1}, {3, 2});
    c.push_back(normal_case("gather_last", "x (3, 5) taken along the last axis at idx (3, 2), a repeat",
                            {"x"}, {{3, 5}},
                            [idx](const std::vector<Var>& v) { return gather_last(v[0], idx); },
                            kLinearStep));
  }
  {
    // Rows 0 and 3 receive two src rows each; row 2 receives none.
    const Tensor rows = Tensor::from_ints({3, 0, 1, 3, 0}, {5});
    c.push_back(normal_case("scatter_add_rows", "src (5, 3) added into rows of a (4, 3) zero tensor, repeats",
                            {"src"}, {{5, 3}},
                            [rows](const std::vector<Var>& v) { return scatter_add_rows(v[0], rows, 4); },
                            kLinearStep));
  }
}

}  // namespace normlab
