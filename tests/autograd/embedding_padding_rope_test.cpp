// The embedding's padding_idx (torch's: the lookup sends no gradient into that row, the true
// derivative everywhere else) and RoPE facts independent of the gradient check: position 0 is the
// identity, a rotation keeps each pair's length, and the pairs are the two halves of the head
// (Hugging Face's rotate-half layout, not neighbouring elements).
#include <gtest/gtest.h>

#include <cmath>

#include "autograd/ops.h"
#include "core/random.h"

namespace normlab {
namespace {

TEST(EmbeddingPadding, PaddingRowGetsNoGradientOthersUnchanged) {
  Generator gen(3);
  const Tensor w0 = Tensor::randn({5, 3}, gen, 0.0, 1.0, DType::F64);
  const Tensor ids = Tensor::from_ints({2, 0, 2, 4, 0}, {5});
  const Tensor g = Tensor::randn({5, 3}, gen, 0.0, 1.0, DType::F64);
  std::vector<std::vector<double>> grads;
  for (int64_t padding : {-1, 2}) {
    Var w = parameter(w0.clone());
    backward(embedding(w, ids, padding), g);
    grads.push_back(w.grad().to_vector());
  }
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t c = 0; c < 3; ++c) {
      const size_t i = static_cast<size_t>(r * 3 + c);
      EXPECT_EQ(grads[1][i], r == 2 ? 0.0 : grads[0][i]) << r << "," << c;
    }
  EXPECT_NE(grads[0][6], 0.0);  // row 2 is used twice: without padding it has a gradient
}

TEST(Rope, PositionZeroIsTheIdentityAndPairsAreTheHalves) {
  const RopeTables t = rope_tables(3, 4, 10.0, DType::F64);
  // x = e_0 at every position: its pair partner is element 2 (= 0 + D/2), not element 1.
  const Tensor x = Tensor::from_vector({1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}, {3, 4}, DType::F64);
  const std::vector<double> y = rope(Var(x), t.cos, t.sin).value().to_vector();
  EXPECT_EQ(std::vector<double>(y.begin(), y.begin() + 4), (std::vector<double>{1, 0, 0, 0}));
  for (int64_t pos = 1; pos < 3; ++pos) {
    const double angle = static_cast<double>(pos);  // inv_freq_0 = theta^0 = 1
    EXPECT_NEAR(y[static_cast<size_t>(pos * 4 + 0)], std::cos(angle), 1e-15);
    EXPECT_EQ(y[static_cast<size_t>(pos * 4 + 1)], 0.0);
    EXPECT_NEAR(y[static_cast<size_t>(pos * 4 + 2)], std::sin(angle), 1e-15);
  }
}

}  // namespace
}  // namespace normlab
