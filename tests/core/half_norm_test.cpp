// LayerNorm and RMSNorm on bfloat16/float16 storage (core/cpu/cpu_norm.cpp) against references
// computed in double from the formulas, rounded only where the contract of core/backend.h says:
// statistics stored as float32; LayerNorm y = round(xhat gamma + beta); LLaMA's RMSNorm
// y = round(round(x rstd) w), Gemma's (unit_offset) y = round(x rstd (1 + w)). The kernels compute
// in float32, so they may differ from the double reference by 1 ulp of the 16-bit type when a value
// lies within float32 rounding of a tie: we require every element within 1 ulp and nearly all
// bitwise equal (the two cast orders differ on far more elements than that, see CastOrdersDiffer).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/norm_ops.h"
#include "core/ops.h"
#include "core/random.h"

namespace normlab {
namespace {

constexpr int64_t kRows = 32, kC = 64;

// v rounded to the 16-bit type dt (correctly, from double).
double round_to(DType dt, double v) {
  return dt == DType::BF16 ? load_float(convert_element<bfloat16>(v))
                           : load_float(convert_element<float16>(v));
}

// The spacing of dt's values at |v| (its subnormal spacing below the smallest normal).
double ulp(DType dt, double v) {
  const int mantissa_bits = dt == DType::BF16 ? 7 : 10, min_exponent = dt == DType::BF16 ? -126 : -14;
  const int e = v == 0.0 ? min_exponent : std::max(std::ilogb(v), min_exponent);
  return std::ldexp(1.0, e - mantissa_bits);
}

// Every element within 1 ulp, at most 1% not bitwise equal.
void expect_matches(const std::vector<double>& got, const std::vector<double>& ref, DType dt,
                    const char* what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  size_t differing = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (got[i] == ref[i]) continue;
    ++differing;
    EXPECT_LE(std::fabs(got[i] - ref[i]), ulp(dt, ref[i])) << what << " element " << i
                                                            << ": got " << got[i] << ", reference " << ref[i];
  }
  EXPECT_LE(differing, ref.size() / 100) << what << ": " << differing << " of " << ref.size()
                                         << " elements not bitwise equal to the reference";
}

Tensor random_half(const Shape& shape, Generator& gen, double mean, double std, DType dt) {
  return Tensor::randn(shape, gen, mean, std, DType::F64).to(dt);
}

// rstd = 1 / sqrt(ms + eps) computed in double and stored as float32, as the kernels store it.
double stored_rstd(double mean_square_or_var, double eps) {
  return static_cast<float>(1.0 / std::sqrt(mean_square_or_var + eps));
}

struct Reference {
  std::vector<double> y, mean, rstd;
};

// RMSNorm in double; llama_order: round x rstd before the weight (g = w); else g = 1 + w, one rounding.
Reference rms_reference(const std::vector<double>& x, const std::vector<double>& w, double eps,
                        bool llama_order, DType dt) {
  Reference ref{std::vector<double>(x.size()), {}, {}};
  for (int64_t r = 0; r < kRows; ++r) {
    double sq = 0.0;
    for (int64_t j = 0; j < kC; ++j) sq += x[r * kC + j] * x[r * kC + j];
    const double rstd = stored_rstd(sq / kC, eps);
    ref.rstd.push_back(rstd);
    for (int64_t j = 0; j < kC; ++j) {
      const double xr = x[r * kC + j] * rstd;
      ref.y[r * kC + j] = llama_order ? round_to(dt, round_to(dt, xr) * w[j]) : round_to(dt, xr * (1.0 + w[j]));
    }
  }
  return ref;
}

Reference layer_norm_reference(const std::vector<double>& x, const std::vector<double>& gamma,
                               const std::vector<double>& beta, double eps, DType dt) {
  Reference ref{std::vector<double>(x.size()), {}, {}};
  for (int64_t r = 0; r < kRows; ++r) {
    double sum = 0.0, sq = 0.0;
    for (int64_t j = 0; j < kC; ++j) sum += x[r * kC + j];
    const double mean = static_cast<float>(sum / kC);
    for (int64_t j = 0; j < kC; ++j) sq += (x[r * kC + j] - mean) * (x[r * kC + j] - mean);
    const double rstd = stored_rstd(sq / kC, eps);
    ref.mean.push_back(mean);
    ref.rstd.push_back(rstd);
    for (int64_t j = 0; j < kC; ++j)
      ref.y[r * kC + j] = round_to(dt, (x[r * kC + j] - mean) * rstd * gamma[j] + beta[j]);
  }
  return ref;
}

class HalfNorm : public ::testing::TestWithParam<DType> {};

TEST_P(HalfNorm, RmsNormLlamaOrderRoundsBeforeTheWeight) {
  const DType dt = GetParam();
  Generator gen(17);
  const Tensor x = random_half({kRows, kC}, gen, 0.0, 2.0, dt), w = random_half({kC}, gen, 1.0, 0.3, dt);
  const ops::NormForward f = ops::rms_norm(x, w, 1e-6, /*unit_offset=*/false);
  const Reference ref = rms_reference(x.to_vector(), w.to_vector(), 1e-6, true, dt);
  EXPECT_EQ(f.y.dtype(), dt);
  ASSERT_EQ(f.rstd.dtype(), DType::F32) << "statistics of 16-bit inputs are float32";
  EXPECT_EQ(f.rstd.to_vector(), ref.rstd);
  expect_matches(f.y.to_vector(), ref.y, dt, "y");
}

TEST_P(HalfNorm, RmsNormGemmaOrderRoundsOnce) {
  const DType dt = GetParam();
  Generator gen(18);
  const Tensor x = random_half({kRows, kC}, gen, 0.0, 2.0, dt), w = random_half({kC}, gen, 0.0, 0.3, dt);
  const ops::NormForward f = ops::rms_norm(x, w, 1e-6, /*unit_offset=*/true);
  const Reference ref = rms_reference(x.to_vector(), w.to_vector(), 1e-6, false, dt);
  ASSERT_EQ(f.rstd.dtype(), DType::F32);
  EXPECT_EQ(f.rstd.to_vector(), ref.rstd);
  expect_matches(f.y.to_vector(), ref.y, dt, "y");
}

TEST_P(HalfNorm, LayerNormRoundsOnce) {
  const DType dt = GetParam();
  Generator gen(19);
  const Tensor x = random_half({kRows, kC}, gen, 0.5, 2.0, dt);
  const Tensor gamma = random_half({kC}, gen, 1.0, 0.3, dt), beta = random_half({kC}, gen, 0.0, 0.5, dt);
  const ops::NormForward f = ops::layer_norm(x, gamma, beta, 1e-5);
  const Reference ref = layer_norm_reference(x.to_vector(), gamma.to_vector(), beta.to_vector(), 1e-5, dt);
  ASSERT_EQ(f.mean.dtype(), DType::F32);
  ASSERT_EQ(f.rstd.dtype(), DType::F32);
  EXPECT_EQ(f.mean.to_vector(), ref.mean);
  EXPECT_EQ(f.rstd.to_vector(), ref.rstd);
  expect_matches(f.y.to_vector(), ref.y, dt, "y");
}

// Backward: the forward's roundings count as the identity; every output is rounded once.
TEST_P(HalfNorm, RmsNormBackwardBothOrders) {
  const DType dt = GetParam();
  for (const bool unit_offset : {false, true}) {
    Generator gen(20);
    const Tensor x = random_half({kRows, kC}, gen, 0.0, 2.0, dt), dy = random_half({kRows, kC}, gen, 0.0, 1.0, dt);
    const Tensor w = random_half({kC}, gen, unit_offset ? 0.0 : 1.0, 0.3, dt);
    const ops::NormForward f = ops::rms_norm(x, w, 1e-6, unit_offset);
    const ops::NormBackward b = ops::rms_norm_backward(dy, x, w, f, unit_offset, true);
    const std::vector<double> xv = x.to_vector(), dyv = dy.to_vector(), wv = w.to_vector(), rstd = f.rstd.to_vector();
    std::vector<double> dx(xv.size()), dw(kC, 0.0);
    for (int64_t r = 0; r < kRows; ++r) {
      double sum = 0.0;
      for (int64_t j = 0; j < kC; ++j) sum += dyv[r * kC + j] * (unit_offset + wv[j]) * xv[r * kC + j] * rstd[r];
      for (int64_t j = 0; j < kC; ++j) {
        const double xhat = xv[r * kC + j] * rstd[r], dxhat = dyv[r * kC + j] * (unit_offset + wv[j]);
        dx[r * kC + j] = round_to(dt, rstd[r] * (dxhat - xhat * sum / kC));
        dw[j] += dyv[r * kC + j] * xhat;
      }
    }
    for (double& v : dw) v = round_to(dt, v);
    EXPECT_EQ(b.dx.dtype(), dt);
    expect_matches(b.dx.to_vector(), dx, dt, unit_offset ? "dx (gemma)" : "dx (llama)");
    expect_matches(b.dgamma.to_vector(), dw, dt, unit_offset ? "dweight (gemma)" : "dweight (llama)");
  }
}

TEST_P(HalfNorm, LayerNormBackward) {
  const DType dt = GetParam();
  Generator gen(21);
  const Tensor x = random_half({kRows, kC}, gen, 0.5, 2.0, dt), dy = random_half({kRows, kC}, gen, 0.0, 1.0, dt);
  const Tensor gamma = random_half({kC}, gen, 1.0, 0.3, dt), beta = random_half({kC}, gen, 0.0, 0.5, dt);
  const ops::NormForward f = ops::layer_norm(x, gamma, beta, 1e-5);
  const ops::NormBackward b = ops::layer_norm_backward(dy, x, gamma, f, true, true);
  const std::vector<double> xv = x.to_vector(), dyv = dy.to_vector(), g = gamma.to_vector();
  const std::vector<double> mean = f.mean.to_vector(), rstd = f.rstd.to_vector();
  std::vector<double> dx(xv.size()), dg(kC, 0.0), db(kC, 0.0);
  for (int64_t r = 0; r < kRows; ++r) {
    double sum = 0.0, sum_xhat = 0.0;
    for (int64_t j = 0; j < kC; ++j) {
      sum += dyv[r * kC + j] * g[j];
      sum_xhat += dyv[r * kC + j] * g[j] * (xv[r * kC + j] - mean[r]) * rstd[r];
    }
    for (int64_t j = 0; j < kC; ++j) {
      const double xhat = (xv[r * kC + j] - mean[r]) * rstd[r];
      dx[r * kC + j] = round_to(dt, rstd[r] * (dyv[r * kC + j] * g[j] - sum / kC - xhat * sum_xhat / kC));
      dg[j] += dyv[r * kC + j] * xhat;
      db[j] += dyv[r * kC + j];
    }
  }
  for (int64_t j = 0; j < kC; ++j) dg[j] = round_to(dt, dg[j]), db[j] = round_to(dt, db[j]);
  expect_matches(b.dx.to_vector(), dx, dt, "dx");
  expect_matches(b.dgamma.to_vector(), dg, dt, "dgamma");
  expect_matches(b.dbeta.to_vector(), db, dt, "dbeta");
}

// GroupNorm in 16 bits: float32 statistics, y the float32 GroupNorm of the same values rounded once.
TEST_P(HalfNorm, GroupNormKeepsFloat32Statistics) {
  const DType dt = GetParam();
  Generator gen(24);
  const Tensor x = random_half({kRows, kC}, gen, 0.5, 2.0, dt), gamma = random_half({kC}, gen, 1.0, 0.3, dt);
  const ops::NormForward f = ops::group_norm(x, gamma, Tensor(), 4, 1e-5);
  const ops::NormForward f32 = ops::group_norm(x.to(DType::F32), gamma.to(DType::F32), Tensor(), 4, 1e-5);
  ASSERT_EQ(f.mean.dtype(), DType::F32);
  ASSERT_EQ(f.rstd.dtype(), DType::F32);
  EXPECT_EQ(f.rstd.to_vector(), f32.rstd.to_vector());
  std::vector<double> ref = f32.y.to_vector();
  for (double& v : ref) v = round_to(dt, v);
  expect_matches(f.y.to_vector(), ref, dt, "group_norm y");
  const ops::NormBackward b = ops::group_norm_backward(x, x, gamma, f, 4, true, false);
  EXPECT_EQ(b.dx.dtype(), dt);
  EXPECT_EQ(b.dgamma.dtype(), dt);
}

TEST_P(HalfNorm, BackwardRejectsStatisticsNotInFloat32) {
  const DType dt = GetParam();
  Generator gen(22);
  const Tensor x = random_half({2, 8}, gen, 0.0, 1.0, dt);
  ops::NormForward f = ops::rms_norm(x, Tensor(), 1e-6, false);
  f.rstd = f.rstd.to(dt);
  EXPECT_THROW(ops::rms_norm_backward(x, x, Tensor(), f, false, false), Error);
}

INSTANTIATE_TEST_SUITE_P(Storage, HalfNorm, ::testing::Values(DType::BF16, DType::F16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// The same gain w = 1 + v as LLaMA's weight w or Gemma's offset weight v (both exact in bfloat16):
// the two cast orders must give different bits on a good share of elements, so that comparing each
// order with its reference above tells them apart.
TEST(HalfNormCastOrder, OrdersDifferInBfloat16) {
  Generator gen(23);
  const Tensor x = random_half({kRows, kC}, gen, 0.0, 2.0, DType::BF16);
  std::vector<double> v(kC);
  for (int64_t j = 0; j < kC; ++j) v[j] = static_cast<double>(gen.next_u64() % 128) / 128.0;  // k / 128
  std::vector<double> w(kC);
  for (int64_t j = 0; j < kC; ++j) w[j] = 1.0 + v[j];
  const Tensor llama_w = Tensor::from_vector(w, {kC}, DType::BF16), gemma_w = Tensor::from_vector(v, {kC}, DType::BF16);
  ASSERT_EQ(llama_w.to_vector(), w);
  ASSERT_EQ(gemma_w.to_vector(), v);
  const std::vector<double> llama = ops::rms_norm(x, llama_w, 1e-6, false).y.to_vector();
  const std::vector<double> gemma = ops::rms_norm(x, gemma_w, 1e-6, true).y.to_vector();
  size_t differing = 0;
  for (size_t i = 0; i < llama.size(); ++i) {
    differing += llama[i] != gemma[i];
    EXPECT_LE(std::fabs(llama[i] - gemma[i]), ulp(DType::BF16, std::max(std::fabs(llama[i]), std::fabs(gemma[i])))) << i;
  }
  EXPECT_GE(differing, llama.size() / 20) << "only " << differing << " of " << llama.size() << " differ";
}

// The seed article's float16 example (003, "Нормализация в половинной точности"): the fused
// rms_norm keeps rstd in float32 and returns (2.0, 0.0067, ...); the same formula from plain float16
// ops (each computed in float32, rounded to float16) squares 300 into inf and returns zeros.
std::vector<double> naive_rms_norm(const Tensor& x, double eps) {
  const Tensor mean_square = ops::reduce(ReduceOp::Mean, ops::unary(UnaryOp::Square, x), -1, true);
  return ops::div(x, ops::unary(UnaryOp::Sqrt, ops::unary(UnaryOp::AddScalar, mean_square, eps))).to_vector();
}

TEST(HalfNormSeedExample, Float16OverflowOnlyInTheNaiveVersion) {
  for (const std::vector<double>& values : {std::vector<double>{300, 1, 1, 1}, std::vector<double>{256, 0, 0, 0}}) {
    const Tensor x = Tensor::from_vector(values, {1, 4}, DType::F16);
    double sq = 0.0;
    for (double v : values) sq += v * v;
    const double rstd = 1.0 / std::sqrt(sq / 4 + 1e-6);
    const ops::NormForward fused = ops::rms_norm(x, Tensor(), 1e-6, false);
    EXPECT_EQ(fused.rstd.dtype(), DType::F32);
    EXPECT_NEAR(fused.rstd.item(), rstd, 1e-7 * rstd);
    const std::vector<double> y = fused.y.to_vector(), naive = naive_rms_norm(x, 1e-6);
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_EQ(y[i], round_to(DType::F16, values[i] * rstd)) << "x[" << i << "] = " << values[i];
      EXPECT_EQ(naive[i], 0.0) << "x[" << i << "] = " << values[i];
    }
  }
  // The printed values of the article.
  const std::vector<double> y = ops::rms_norm(Tensor::from_vector({300, 1, 1, 1}, {1, 4}, DType::F16), Tensor(),
                                              1e-6, false).y.to_vector();
  EXPECT_NEAR(y[0], 2.0, 1e-3);
  for (int i = 1; i < 4; ++i) EXPECT_NEAR(y[i], 0.0067, 5e-5);
}

}  // namespace
}  // namespace normlab
