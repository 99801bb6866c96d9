// bfloat16 / float16 conversions (core/half.h) against an independent reference: the nearest of the
// two representable neighbours, found by enumerating every 16-bit pattern and comparing in double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/half.h"
#include "core/tensor.h"

namespace normlab {
namespace {

// All finite non-negative values of a 16-bit type, ascending, with their bit patterns.
template <typename H, typename ToFloat>
std::vector<std::pair<double, uint16_t>> finite_values(ToFloat to_float) {
  std::vector<std::pair<double, uint16_t>> values;
  for (uint32_t b = 0; b < 0x8000u; ++b) {
    const float f = to_float(H{static_cast<uint16_t>(b)});
    if (std::isfinite(f)) values.emplace_back(f, static_cast<uint16_t>(b));
  }
  std::sort(values.begin(), values.end());
  return values;
}

// Round-to-nearest-even reference for a non-negative x: the bit pattern, or 0x7c00/0x7f80 for inf.
uint16_t reference_round(const std::vector<std::pair<double, uint16_t>>& table, double x,
                         uint16_t inf_bits) {
  auto hi = std::lower_bound(table.begin(), table.end(), std::make_pair(x, uint16_t{0}));
  if (hi != table.end() && hi->first == x) return hi->second;
  const auto lo = hi - 1;
  // beyond the largest finite value: the next step up would be inf (IEEE overflow rule)
  const double top_gap = table.back().first - (table.end() - 2)->first;
  const double next_above = hi == table.end() ? table.back().first + top_gap : hi->first;
  const uint16_t next_bits = hi == table.end() ? inf_bits : hi->second;
  const double down = x - lo->first, up = next_above - x;
  if (down < up) return lo->second;
  if (up < down) return next_bits;
  return (lo->second & 1u) == 0 ? lo->second : next_bits;  // tie: the even one
}

TEST(HalfPrecision, EveryPatternRoundTripsExactly) {
  for (uint32_t b = 0; b <= 0xffffu; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const float bf = bf16_to_float(bfloat16{bits});
    const float hf = f16_to_float(float16{bits});
    if (std::isnan(bf)) EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(bf)))) << b;
    else EXPECT_EQ(float_to_bf16(bf).bits, bits) << b;
    if (std::isnan(hf)) EXPECT_TRUE(std::isnan(f16_to_float(float_to_f16(hf)))) << b;
    else EXPECT_EQ(float_to_f16(hf).bits, bits) << b;
  }
}

TEST(HalfPrecision, Float16KnownValues) {
  EXPECT_EQ(f16_to_float(float16{0x7bff}), 65504.0f);           // the largest float16
  EXPECT_EQ(f16_to_float(float16{0x0001}), std::ldexp(1.0f, -24));  // the smallest subnormal
  EXPECT_EQ(f16_to_float(float16{0x3c00}), 1.0f);
  EXPECT_EQ(float_to_f16(65519.0f).bits, 0x7bffu);  // below the midpoint to 65536: stays finite
  EXPECT_EQ(float_to_f16(65520.0f).bits, 0x7c00u);  // the midpoint rounds to inf
  EXPECT_EQ(float_to_f16(90000.0f).bits, 0x7c00u);  // the seed's sum of squares overflows
  EXPECT_EQ(float_to_f16(-1e30f).bits, 0xfc00u);
  EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -25)).bits, 0x0000u);  // tie between 0 and 2^-24: even
  EXPECT_EQ(float_to_f16(std::ldexp(3.0f, -26)).bits, 0x0001u);
  EXPECT_TRUE(std::isnan(f16_to_float(float_to_f16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isinf(f16_to_float(float_to_f16(std::numeric_limits<float>::infinity()))));
}

// The portable (bit manipulation) path, which a build with F16C replaces by the instruction at run
// time: checked at compile time, where it is the one evaluated.
static_assert(float_to_f16(65519.0f).bits == 0x7bff && float_to_f16(65520.0f).bits == 0x7c00);
static_assert(float_to_f16(0x1p-25f).bits == 0x0000 && float_to_f16(0x3p-26f).bits == 0x0001);
static_assert(float_to_f16(0x1.ffcp-15f).bits == 0x0400);  // 1023.5 x 2^-24, a tie: up to even (2^-14)
static_assert(float_to_f16(1.0f + 0x1p-11f).bits == 0x3c00 && float_to_f16(1.0f + 0x3p-11f).bits == 0x3c02);
static_assert(f16_to_float(float16{0x0001}) == 0x1p-24f && f16_to_float(float16{0x03ff}) == 0x1.ff8p-15f);
static_assert(f16_to_float(float16{0x7bff}) == 65504.0f && f16_to_float(float16{0xfc00}) == -__builtin_inff());

TEST(HalfPrecision, BFloat16KnownValues) {
  EXPECT_EQ(float_to_bf16(1.0f).bits, 0x3f80u);
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)).bits, 0x3f80u);  // tie: stays even
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)).bits, 0x3f82u);  // tie: up to even
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()).bits, 0x7f80u);  // rounds to inf
  EXPECT_EQ(float_to_bf16(-std::numeric_limits<float>::infinity()).bits, 0xff80u);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

// Random floats over the whole range, and values near every tie, against the table reference.
TEST(HalfPrecision, RoundingMatchesTheNearestNeighbour) {
  const auto f16 = finite_values<float16>(f16_to_float);
  const auto bf16 = finite_values<bfloat16>(bf16_to_float);
  std::mt19937 gen(7);
  std::vector<float> xs;
  for (int i = 0; i < 20000; ++i) {
    xs.push_back(std::ldexp(std::uniform_real_distribution<float>(1.0f, 2.0f)(gen),
                            std::uniform_int_distribution<int>(-27, 17)(gen)));
  }
  for (size_t i = 1; i < f16.size(); i += 37) {  // midpoints and their float neighbours
    const float mid = static_cast<float>((f16[i - 1].first + f16[i].first) / 2);
    for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) xs.push_back(x);
  }
  for (float x : xs) {
    EXPECT_EQ(float_to_f16(x).bits, reference_round(f16, x, 0x7c00u)) << x;
    EXPECT_EQ(float_to_f16(-x).bits, reference_round(f16, x, 0x7c00u) | 0x8000u) << -x;
    if (std::ldexp(1.0, -126) <= x) {
      EXPECT_EQ(float_to_bf16(x).bits, reference_round(bf16, x, 0x7f80u)) << x;
    }
  }
}

// double -> 16 bits is rounded once: 1 + 2^-8 + 2^-30 is just above a bfloat16 tie, but a double ->
// float step alone would land exactly on the tie and round down to 1.
TEST(HalfPrecision, DoubleIsRoundedOnce) {
  const double above_tie = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);
  EXPECT_EQ(convert_element<bfloat16>(above_tie).bits, 0x3f81u);
  const double below_tie = 1.0 + std::ldexp(1.0, -11) - std::ldexp(1.0, -40);  // float16 ulp 2^-10
  EXPECT_EQ(convert_element<float16>(below_tie).bits, 0x3c00u);
  EXPECT_EQ(convert_element<double>(bfloat16{0x3f81}), 1.0 + std::ldexp(1.0, -7));
}

TEST(HalfPrecision, TensorsConvertAndPrintTheirDtype) {
  const Tensor x = Tensor::from_vector({300.0, 1.0, 65519.0, 1e-8}, {4}, DType::F16);
  EXPECT_EQ(x.describe(), "float16 (4,) cpu");
  const std::vector<double> back = x.to_vector();
  EXPECT_EQ(back[0], 300.0);
  EXPECT_EQ(back[2], 65504.0);
  EXPECT_EQ(back[3], 0.0);  // below float16's subnormals: flushes to 0 (a real loss of the value)
  const Tensor b = x.to(DType::BF16);
  EXPECT_EQ(b.to(DType::F32).to_vector()[2], 65536.0);  // 65504 has no bfloat16: nearest is 2^16
  Tensor strided = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3}).transpose(0, 1);
  EXPECT_EQ(strided.to(DType::BF16).to_vector(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  Tensor filled = Tensor::full({3}, 1.0 / 3.0, DType::BF16);
  EXPECT_EQ(filled.to_vector()[0], static_cast<double>(round_to_bf16(1.0f / 3.0f)));
}

}  // namespace
}  // namespace normlab
