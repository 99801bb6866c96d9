// The vectorised contiguous conversions (core/cpu/half_convert.h) against core/half.h's scalar
// ones, element for element: every 16-bit pattern up, and float32 patterns down (random bits,
// ties, subnormals, overflow, inf and NaN), at lengths that leave a ragged vector tail.
#include "core/cpu/half_convert.h"

#include <gtest/gtest.h>

#include <bit>
#include <limits>
#include <random>
#include <vector>

namespace normlab {
namespace {

template <typename H> float scalar_load(H h) { return load_float(h); }

template <typename H> void expect_every_pattern_loads_exactly() {
  std::vector<H> all(65536 + 7);  // 7 more: a tail after the last full vector
  for (size_t i = 0; i < all.size(); ++i) all[i].bits = static_cast<uint16_t>(i);
  std::vector<float> got(all.size());
  to_float(all.data(), got.data(), static_cast<int64_t>(all.size()));
  for (size_t i = 0; i < all.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(scalar_load(all[i]))) << "bits " << i;
}

TEST(HalfConvert, EveryBfloat16AndFloat16PatternLoadsExactly) {
  expect_every_pattern_loads_exactly<bfloat16>();
  expect_every_pattern_loads_exactly<float16>();
}

std::vector<float> awkward_floats() {
  std::vector<float> v;
  std::mt19937 rng(5);
  for (int i = 0; i < 200000; ++i) v.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
  // Around float16's range and precision: ties at 2^-24 steps, its max 65504 and the overflow edge
  // 65520, subnormals; bfloat16's ties (low 16 bits 0x8000) and the carry into the exponent.
  for (float f : {65504.0f, 65519.99f, 65520.0f, 1e-8f, 2.98e-8f, 6.1e-5f, 1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f})
    v.insert(v.end(), {f, -f});
  for (uint32_t u : {0x3f808000u, 0x3f818000u, 0x7f7f8000u, 0x7f7fffffu, 0x00008000u, 0x80000001u})
    v.push_back(std::bit_cast<float>(u));
  v.insert(v.end(), {0.0f, -0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                     std::numeric_limits<float>::quiet_NaN(), std::bit_cast<float>(0x7f800001u),
                     std::bit_cast<float>(0xff800123u), std::numeric_limits<float>::denorm_min()});
  v.resize(v.size() / 16 * 16 + 5);  // a ragged tail
  return v;
}

template <typename H> void expect_every_float_rounds_like_the_scalar() {
  const std::vector<float> in = awkward_floats();
  std::vector<H> got(in.size());
  from_float(in.data(), got.data(), static_cast<int64_t>(in.size()));
  for (size_t i = 0; i < in.size(); ++i)
    ASSERT_EQ(got[i].bits, store_float<H>(in[i]).bits)
        << "float bits 0x" << std::hex << std::bit_cast<uint32_t>(in[i]) << " (element " << std::dec << i << ")";
}

TEST(HalfConvert, FloatsRoundToNearestEvenLikeTheScalarConversion) {
  expect_every_float_rounds_like_the_scalar<bfloat16>();
  expect_every_float_rounds_like_the_scalar<float16>();
}

TEST(HalfConvert, ChunksCoverTheRangeOnceWhateverTheThreads) {
  const int threads_before = num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (int64_t n : {int64_t{0}, int64_t{1}, kChunkElements, 3 * kChunkElements + 17}) {
      std::vector<int> hits(static_cast<size_t>(n), 0);
      for_each_chunk(n, 0, [&](int64_t begin, int64_t count) {
        EXPECT_EQ(begin % kChunkElements, 0);
        for (int64_t i = begin; i < begin + count; ++i) ++hits[static_cast<size_t>(i)];
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)], 1) << "n " << n << " element " << i;
    }
  }
  set_num_threads(threads_before);
}

}  // namespace
}  // namespace normlab
