// bfloat16/float16 GEMM (core/cpu/half_gemm.h) on both implementations, oneDNN and the float32
// fallback, against a double-precision triple loop over the same (already rounded) half inputs.
// Tolerance: float32 accumulation over k terms (k 2^-23 of the sum of |terms|) plus one rounding
// to the half type (2^-8 relative for bfloat16, 2^-11 for float16).
#include <gtest/gtest.h>

#include <cstdlib>

#include <cmath>
#include <tuple>

#include "core/cpu/half_gemm.h"
#include "core/ops.h"
#include "core/random.h"

namespace normlab {
namespace {

// C[s] = alpha op(A[s]) op(B[s]) + beta C[s], strides as in GemmArgs; also returns per element the
// sum of |terms| that bounds the float32 accumulation error.
struct Reference {
  std::vector<double> c, magnitude;
};

Reference reference_gemm(const GemmArgs& g, const std::vector<double>& a, const std::vector<double>& b,
                         const std::vector<double>& c_in) {
  Reference r{c_in, std::vector<double>(c_in.size(), 0.0)};
  for (int64_t s = 0; s < g.batch; ++s) {
    const double* as = a.data() + s * g.stride_a;
    const double* bs = b.data() + s * g.stride_b;
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        double acc = 0.0, mag = 0.0;
        for (int64_t p = 0; p < g.k; ++p) {
          const double av = g.trans_a ? as[p * g.m + i] : as[i * g.k + p];
          const double bv = g.trans_b ? bs[j * g.k + p] : bs[p * g.n + j];
          acc += av * bv;
          mag += std::fabs(av * bv);
        }
        const size_t at = static_cast<size_t>(s * g.stride_c + i * g.n + j);
        const double old = g.beta == 0.0 ? 0.0 : g.beta * c_in[at];  // beta 0: C is not read (may be NaN)
        r.c[at] = g.alpha * acc + old;
        r.magnitude[at] = std::fabs(g.alpha) * mag + std::fabs(old);
      }
  }
  return r;
}

using HalfGemmParam = std::tuple<HalfGemmPath, DType, bool, bool>;

class HalfGemmTest : public ::testing::TestWithParam<HalfGemmParam> {
 protected:
  void SetUp() override {
    const auto [path, dtype, ta, tb] = GetParam();
    if (path == HalfGemmPath::OneDnn && !onednn_gemm_available(dtype))
      GTEST_SKIP() << "oneDNN cannot run " << dtype_name(dtype) << " here (not built with it, or no kernel)";
    set_half_gemm_path(path);
  }
  void TearDown() override { set_half_gemm_path(HalfGemmPath::Auto); }

  // Contiguous batched operands with this test's transpose flags.
  GemmArgs shape(int64_t batch, int64_t m, int64_t n, int64_t k) const {
    GemmArgs g;
    g.trans_a = std::get<2>(GetParam());
    g.trans_b = std::get<3>(GetParam());
    g.batch = batch;
    g.m = m;
    g.n = n;
    g.k = k;
    g.stride_a = m * k;
    g.stride_b = k * n;
    g.stride_c = m * n;
    return g;
  }

  // Runs gemm on random operands laid out for g (a zero stride: one matrix for the whole batch) and
  // checks every element of C against the reference.
  void check(const GemmArgs& g, bool random_c = false) {
    const auto [path, dtype, ta, tb] = GetParam();
    ASSERT_EQ(half_gemm_path(dtype), path);
    Generator gen(23);
    const int64_t a_count = g.stride_a == 0 ? 1 : g.batch, b_count = g.stride_b == 0 ? 1 : g.batch;
    Tensor a = Tensor::randn({a_count, g.m * g.k}, gen).to(dtype);
    Tensor b = Tensor::randn({b_count, g.k * g.n}, gen).to(dtype);
    Tensor c = random_c ? Tensor::randn({g.batch, g.m * g.n}, gen).to(dtype)
                        : Tensor::full({g.batch, g.m * g.n}, std::nan(""), dtype);  // beta 0 must not read C
    const Reference want = reference_gemm(g, a.to_vector(), b.to_vector(), c.to_vector());
    cpu_backend().gemm(g, a, b, c);
    const std::vector<double> got = c.to_vector();
    const double unit = dtype == DType::BF16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
    for (size_t i = 0; i < got.size(); ++i) {
      const double accumulation = std::ldexp(static_cast<double>(g.k + 2), -23) * want.magnitude[i];
      const double tol = unit * (std::fabs(want.c[i]) + accumulation) + accumulation;
      ASSERT_NEAR(got[i], want.c[i], tol) << "element " << i;
    }
  }
};

TEST_P(HalfGemmTest, Plain) { check(shape(1, 37, 19, 70)); }
TEST_P(HalfGemmTest, Small) { check(shape(1, 5, 3, 4)); }
TEST_P(HalfGemmTest, Batched) { check(shape(3, 9, 17, 33)); }
TEST_P(HalfGemmTest, SharedB) {
  GemmArgs g = shape(4, 11, 13, 24);
  g.stride_b = 0;
  check(g);
}
TEST_P(HalfGemmTest, SharedA) {
  GemmArgs g = shape(3, 12, 10, 20);
  g.stride_a = 0;
  check(g);
}
TEST_P(HalfGemmTest, AlphaBeta) {
  GemmArgs g = shape(2, 21, 14, 40);
  g.alpha = 0.5;
  g.beta = 1.5;
  check(g, true);
}
TEST_P(HalfGemmTest, BetaOneAccumulates) {
  GemmArgs g = shape(1, 16, 16, 16);
  g.beta = 1.0;
  check(g, true);
}
TEST_P(HalfGemmTest, EmptyInnerDimensionScalesC) {
  GemmArgs g = shape(2, 3, 4, 0);
  g.beta = 0.5;
  check(g, true);
}
// Square operands: every transpose has the same shapes and leading dimensions, so an implementation
// that caches by shape must tell the four apart by the transpose flags (run here back to back).
TEST_P(HalfGemmTest, SameShapeEveryTranspose) {
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      SCOPED_TRACE(std::string("ta ") + (ta ? "1" : "0") + " tb " + (tb ? "1" : "0"));
      GemmArgs g = shape(1, 24, 24, 24);
      g.trans_a = ta;
      g.trans_b = tb;
      check(g);
    }
}
std::string half_gemm_param_name(const ::testing::TestParamInfo<HalfGemmParam>& info) {
  const auto [path, dtype, ta, tb] = info.param;
  return std::string(half_gemm_path_name(path)) + "_" + (dtype == DType::BF16 ? "bf16_" : "f16_") +
         (ta ? "t" : "n") + (tb ? "t" : "n");
}

INSTANTIATE_TEST_SUITE_P(BothPaths, HalfGemmTest,
                         ::testing::Combine(::testing::Values(HalfGemmPath::Fallback, HalfGemmPath::OneDnn),
                                            ::testing::Values(DType::BF16, DType::F16), ::testing::Bool(),
                                            ::testing::Bool()),
                         half_gemm_param_name);

TEST(HalfGemm, MixedDtypesAreAnError) {
  GemmArgs g;
  g.m = g.n = g.k = 2;
  Tensor a = Tensor::zeros({2, 2}, DType::BF16), b = Tensor::zeros({2, 2}, DType::F16);
  Tensor c = Tensor::zeros({2, 2}, DType::BF16);
  try {
    cpu_backend().gemm(g, a, b, c);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[gemm]"), std::string::npos) << e.what();
  }
}

// Auto decides once per dtype and process and keeps it (a run never switches paths); oneDNN only
// where it runs the dtype; the description names the path and why.
TEST(HalfGemmAuto, DecidesOnceAndSaysWhy) {
  set_half_gemm_path(HalfGemmPath::Auto);
  for (const DType dtype : {DType::BF16, DType::F16}) {
    const HalfGemmPath first = half_gemm_path(dtype);
    EXPECT_NE(first, HalfGemmPath::Auto);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(half_gemm_path(dtype), first);
    if (!onednn_gemm_available(dtype)) {
      EXPECT_EQ(first, HalfGemmPath::Fallback);
    }
    const std::string why = half_gemm_description(dtype);
    EXPECT_EQ(why.rfind(std::string(half_gemm_path_name(first)), 0), 0u) << why;
    // Where it measured, the path follows the measured ratio and the margin.
    if (const size_t at = why.find("measured "); at != std::string::npos) {
      const double ratio = std::strtod(why.c_str() + at + 9, nullptr);
      EXPECT_GT(ratio, 0.0) << why;
      EXPECT_EQ(first == HalfGemmPath::OneDnn, ratio >= kAutoMargin) << why;
    }
  }
  set_half_gemm_path(HalfGemmPath::Fallback);
  EXPECT_EQ(half_gemm_description(DType::BF16), "fallback (NORMLAB_HALF_GEMM)");
  set_half_gemm_path(HalfGemmPath::Auto);
}

// The probe's Linear GEMMs are what their names say: forward X W^T, input gradient dY W, weight
// gradient dY^T X, each checked against ops::matmul with the transposes spelled out.
TEST(LinearGemm, EachGemmIsTheLinearLayersProduct) {
  Generator gen(5);
  const int64_t rows = 6, in = 4, out = 3;
  const struct {
    LinearGemm which;
    bool trans_a, trans_b;
    Shape c_shape;
  } cases[] = {{LinearGemm::Forward, false, true, {rows, out}},
               {LinearGemm::InputGrad, false, false, {rows, in}},
               {LinearGemm::WeightGrad, true, false, {out, in}}};
  for (const auto& c : cases) {
    GemmOperands o = random_linear_gemm(c.which, rows, in, out, DType::F32, gen);
    cpu_backend().gemm(o.args, o.a, o.b, o.c);
    EXPECT_EQ(o.c.shape(), c.c_shape);
    EXPECT_EQ(o.c.to_vector(), ops::matmul(o.a, o.b, c.trans_a, c.trans_b).to_vector());
  }
}

}  // namespace
}  // namespace normlab
