// GEMM (through ops::matmul and the backend) against a naive triple loop: every transpose pair,
// float32 and float64, plain, batched and with a weight shared across the batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/backend.h"
#include "core/cpu/blas_core.h"
#include "core/ops.h"
#include "core/random.h"

namespace normlab {
namespace {

// C[b] = op(A[b]) op(B[b or shared]); A stored (batch, M, K) or (batch, K, M), B likewise.
std::vector<double> naive_matmul(const std::vector<double>& a, const std::vector<double>& b,
                                 int64_t batch, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                                 bool b_shared) {
  std::vector<double> c(static_cast<size_t>(batch * m * n), 0.0);
  for (int64_t s = 0; s < batch; ++s) {
    const double* as = a.data() + s * m * k;
    const double* bs = b.data() + (b_shared ? 0 : s * k * n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0.0;
        for (int64_t p = 0; p < k; ++p) {
          const double av = ta ? as[p * m + i] : as[i * k + p];
          const double bv = tb ? bs[j * k + p] : bs[p * n + j];
          acc += av * bv;
        }
        c[(s * m + i) * n + j] = acc;
      }
  }
  return c;
}

using GemmParam = std::tuple<DType, bool, bool>;

class GemmTest : public ::testing::TestWithParam<GemmParam> {
 protected:
  void check(const Shape& batch, bool b_shared, int64_t m = 5, int64_t n = 3, int64_t k = 4) {
    const auto [dtype, ta, tb] = GetParam();
    Shape a_shape = batch, b_shape = b_shared ? Shape{} : batch;
    a_shape.push_back(ta ? k : m);
    a_shape.push_back(ta ? m : k);
    b_shape.push_back(tb ? n : k);
    b_shape.push_back(tb ? k : n);
    Generator gen(17);
    Tensor a = Tensor::randn(a_shape, gen, 0.0, 1.0, dtype);
    Tensor b = Tensor::randn(b_shape, gen, 0.0, 1.0, dtype);
    Tensor c = ops::matmul(a, b, ta, tb);
    Shape want_shape = batch;
    want_shape.push_back(m);
    want_shape.push_back(n);
    ASSERT_EQ(c.shape(), want_shape);
    ASSERT_EQ(c.dtype(), dtype);
    const std::vector<double> want =
        naive_matmul(a.to_vector(), b.to_vector(), numel_of(batch), m, n, k, ta, tb, b_shared);
    const std::vector<double> got = c.to_vector();
    const double tol = (dtype == DType::F32 ? 1e-5 : 1e-12) * std::max<double>(1.0, std::sqrt(k / 4.0));
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
  }
};

TEST_P(GemmTest, Plain) { check({}, false); }
TEST_P(GemmTest, Batched) { check({2, 3}, false); }
TEST_P(GemmTest, SharedWeight) { check({2, 3}, true); }
// 301 rows on 2 threads: the CPU backend splits rows of C over threads (uneven halves).
TEST_P(GemmTest, RowsSplitOverThreads) {
  const int before = num_threads();
  set_num_threads(2);
  check({}, false, 301);
  check({2}, false, 301);
  set_num_threads(before);
}
// One float32 matrix large enough to split (pieces of m n k >= 2^21) goes over threads along the
// longer side of C: rows when tall, columns when wide.
TEST_P(GemmTest, TallAndWideSplitOverThreads) {
  const int before = num_threads();
  set_num_threads(2);
  check({}, false, 1030, 64, 256);
  check({}, false, 64, 1030, 256);
  set_num_threads(before);
}

std::string gemm_param_name(const ::testing::TestParamInfo<GemmParam>& info) {
  const DType dtype = std::get<0>(info.param);
  return std::string(dtype == DType::F32 ? "f32_" : "f64_") + (std::get<1>(info.param) ? "t" : "n") +
         (std::get<2>(info.param) ? "t" : "n");
}

INSTANTIATE_TEST_SUITE_P(AllTransposes, GemmTest,
                         ::testing::Combine(::testing::Values(DType::F32, DType::F64),
                                            ::testing::Bool(), ::testing::Bool()),
                         gemm_param_name);

TEST(Gemm, BackendAlphaBetaAccumulates) {
  // C = 2 A B + 1 C with A (2, 2), B (2, 2), C preset to ones.
  Tensor a = Tensor::from_vector({1, 2, 3, 4}, {2, 2}, DType::F64);
  Tensor b = Tensor::from_vector({5, 6, 7, 8}, {2, 2}, DType::F64);
  Tensor c = Tensor::ones({2, 2}, DType::F64);
  GemmArgs g;
  g.m = g.n = g.k = 2;
  g.alpha = 2.0;
  g.beta = 1.0;
  cpu_backend().gemm(g, a, b, c);
  EXPECT_EQ(c.to_vector(), (std::vector<double>{39, 45, 87, 101}));  // 2 * [[19,22],[43,50]] + 1
}

TEST(Gemm, NonContiguousInputsAreHandled) {
  Generator gen(5);
  Tensor a = Tensor::randn({4, 3}, gen, 0.0, 1.0, DType::F64);
  Tensor b = Tensor::randn({4, 2}, gen, 0.0, 1.0, DType::F64);
  // a.transpose is a strided view; matmul must see its logical (3, 4) values.
  Tensor via_view = ops::matmul(a.transpose(0, 1), b);
  Tensor via_flag = ops::matmul(a, b, true, false);
  const auto x = via_view.to_vector(), y = via_flag.to_vector();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], y[i], 1e-12);
}

TEST(Gemm, ErrorsNameMatmulAndBothShapes) {
  Tensor a = Tensor::zeros({2, 3}), b = Tensor::zeros({4, 5});
  try {
    ops::matmul(a, b);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[matmul]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(2, 3)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(4, 5)"), std::string::npos) << msg;
  }
  EXPECT_THROW(ops::matmul(Tensor::zeros({2, 2, 3}), Tensor::zeros({3, 3, 4})), Error);  // batch axes
  EXPECT_THROW(ops::matmul(Tensor::zeros({3}), Tensor::zeros({3, 4})), Error);           // 1-d
  EXPECT_THROW(ops::matmul(Tensor::zeros({2, 3}), Tensor::zeros({3, 4}, DType::F64)), Error);
}

// matmul_bias adds bias to every row through GEMM's beta = 1 onto a broadcast copy: it must equal
// matmul + bias, for both orientations of b and for one row (where the broadcast view of the bias
// is itself contiguous and must still be copied, not written through).
TEST(Gemm, MatmulBiasEqualsMatmulPlusBiasAndLeavesTheBiasAlone) {
  Generator gen(11);
  for (const int64_t rows : {1, 5}) {
    for (const bool tb : {false, true}) {
      SCOPED_TRACE("rows " + std::to_string(rows) + (tb ? " b^T" : " b"));
      const Tensor a = Tensor::randn({rows, 3}, gen, 0.0, 1.0, DType::F64);
      const Tensor b = tb ? Tensor::randn({4, 3}, gen, 0.0, 1.0, DType::F64)
                          : Tensor::randn({3, 4}, gen, 0.0, 1.0, DType::F64);
      const Tensor bias = Tensor::randn({4}, gen, 0.0, 1.0, DType::F64);
      const std::vector<double> bias_before = bias.to_vector();
      const auto fused = ops::matmul_bias(a, b, bias, tb).to_vector();
      const auto plain = ops::add(ops::matmul(a, b, false, tb), bias).to_vector();
      ASSERT_EQ(fused.size(), plain.size());
      for (size_t i = 0; i < fused.size(); ++i) EXPECT_NEAR(fused[i], plain[i], 1e-12);
      EXPECT_EQ(bias.to_vector(), bias_before);
    }
  }
  try {
    ops::matmul_bias(Tensor::zeros({2, 3}), Tensor::zeros({3, 4}), Tensor::zeros({5}), false);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[matmul_bias]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("got (5,)"), std::string::npos) << msg;
  }
}

// The float32 product must not depend on the thread count, bit for bit. `shapes` as (m, n, k), each
// with every transpose pair, optionally as a batch of `batch` matrices.
struct Mnk {
  int64_t m, n, k;
};
void expect_same_bits_at_one_and_two_threads(const std::vector<Mnk>& shapes, int64_t batch = 0) {
  const int before = num_threads();
  Generator gen(5);
  for (const Mnk& s : shapes)
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        Shape sa = ta ? Shape{s.k, s.m} : Shape{s.m, s.k}, sb = tb ? Shape{s.n, s.k} : Shape{s.k, s.n};
        if (batch > 0) {
          sa.insert(sa.begin(), batch);
          sb.insert(sb.begin(), batch);
        }
        const Tensor a = Tensor::randn(sa, gen), b = Tensor::randn(sb, gen);
        set_num_threads(1);
        const std::vector<double> one = ops::matmul(a, b, ta, tb).to_vector();
        set_num_threads(2);
        EXPECT_EQ(ops::matmul(a, b, ta, tb).to_vector(), one)
            << "(" << s.m << ", " << s.n << ", " << s.k << ") trans " << ta << tb << " batch " << batch;
      }
  set_num_threads(before);
}

// Products too small to split into pieces above OpenBLAS's small-matrix threshold run on one thread
// at every thread count, under any kernels: OpenBLAS's own threading computes (128, 20, 400) and
// (128, 40, 390) with other sums at 2 threads, and halves of (128, 130, 100) ... (300, 130, 100)
// (m n k between 10^6 and 2^21 each) would fall to the small-matrix kernels (other rounding).
// Small batched products go whole to one thread each.
TEST(Gemm, ProductsTooSmallToSplitGiveTheSameBitsAtEveryThreadCount) {
  expect_same_bits_at_one_and_two_threads({{128, 20, 400}, {128, 40, 390}, {128, 130, 100}, {130, 130, 100},
                                           {20, 130, 768}, {64, 301, 100}, {300, 130, 100}});
  expect_same_bits_at_one_and_two_threads({{64, 32, 64}, {64, 64, 32}, {256, 64, 256}, {256, 256, 64}}, 6);
}

// Larger products are split along the longer side of C (rows, or columns when C is wider), or left
// to OpenBLAS's threading above 2^26. Under AVX-512 kernels a piece is summed exactly as the
// same rows or columns of the whole; under Haswell's (AVX2) kernels, which this CPU may be forced
// to by OPENBLAS_CORETYPE, neither our split nor OpenBLAS's own threading keeps the bits.
TEST(Gemm, SplitProductsGiveTheSameBitsAtEveryThreadCountUnderAvx512Kernels) {
  if (!blas_runs_avx512_kernels())
    GTEST_SKIP() << "OpenBLAS runs " << blas_core_name() << " kernels; ctest reruns this under SkylakeX's";
  expect_same_bits_at_one_and_two_threads({{768, 128, 128}, {128, 512, 768}, {512, 128, 768}, {1030, 64, 256},
                                           {64, 1030, 256}, {96, 128, 768}, {512, 130, 100}, {2048, 2048, 512},
                                           {2048, 512, 2048}, {1024, 768, 3072}});
}

}  // namespace
}  // namespace normlab
