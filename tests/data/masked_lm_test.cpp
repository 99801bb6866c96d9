// Masked-LM batches (data/masked_lm.cpp): which positions are selected, what their targets and
// inputs become, and that the stream is a function of the generator's state. The original windows
// come from a plain text dataset of the same text sampled from the same generator state (the
// wrapper draws its windows first, through the base). Frequencies are checked within 5 binomial
// standard deviations, sqrt(n p (1 - p)), around the recipe's value.
#include <gtest/gtest.h>

#include <cmath>

#include "data/dataset.h"

namespace normlab {
namespace {

std::string random_text(size_t n, uint64_t seed) {
  const std::string alphabet = "abcdefghijklmnopqrstuvwxyz .,\n";
  Generator g(seed);
  std::string s;
  for (size_t i = 0; i < n; ++i) s += alphabet[g.below(alphabet.size())];
  return s;
}

struct Pair {
  std::unique_ptr<Dataset> plain, masked;
};

Pair datasets(double mask_prob = 0.15) {
  const std::string text = random_text(20000, 1);
  return {make_text_dataset(text, "char", 0.1, "test text"),
          make_masked_lm_dataset(make_text_dataset(text, "char", 0.1, "test text"), mask_prob)};
}

// |count - n p| <= 5 sqrt(n p (1 - p))
void expect_binomial(int64_t count, int64_t n, double p, const std::string& what) {
  const double mean = static_cast<double>(n) * p, sigma = std::sqrt(static_cast<double>(n) * p * (1 - p));
  EXPECT_LE(std::abs(static_cast<double>(count) - mean), 5 * sigma)
      << what << ": " << count << " of " << n << ", expected " << mean << " +- 5 x " << sigma;
}

// What happened at each position of a large batch, compared with the original windows.
struct Tally {
  int64_t selected = 0, as_mask = 0, unchanged = 0, random = 0;
  std::vector<int64_t> per_position;
};

Tally tally(const Pair& d, bool validation, int64_t B, int64_t T, int64_t k, uint64_t seed) {
  Generator g1(seed), g2(seed);
  const Batch original = d.plain->sample(validation, B, T, g1), masked = d.masked->sample(validation, B, T, g2);
  const auto orig = original.inputs.to_ints(), in = masked.inputs.to_ints(), tg = masked.targets.to_ints();
  const int32_t mask_id = static_cast<int32_t>(d.plain->vocab_size());
  Tally r;
  r.per_position.assign(static_cast<size_t>(T), 0);
  for (int64_t b = 0; b < B; ++b) {
    int64_t in_row = 0;
    for (int64_t t = 0; t < T; ++t) {
      const size_t i = static_cast<size_t>(b * T + t);
      if (tg[i] == -1) {
        EXPECT_EQ(in[i], orig[i]) << "an unselected input changed at (" << b << ", " << t << ")";
        continue;
      }
      ++in_row;
      ++r.per_position[t];
      EXPECT_EQ(tg[i], orig[i]) << "the target is not the original token at (" << b << ", " << t << ")";
      EXPECT_NE(tg[i], mask_id) << "[MASK] is a target";
      r.as_mask += in[i] == mask_id;
      r.unchanged += in[i] == orig[i];
      r.random += in[i] != mask_id && in[i] != orig[i];
    }
    EXPECT_EQ(in_row, k) << "row " << b;
    r.selected += in_row;
  }
  return r;
}

TEST(MaskedLm, VocabularyAddsOneMaskToken) {
  const Pair d = datasets();
  EXPECT_EQ(d.masked->vocab_size(), d.plain->vocab_size() + 1);
  ASSERT_NE(d.masked->tokenizer(), nullptr);  // the base's: [MASK] is no character
  EXPECT_EQ(d.masked->tokenizer()->vocab_size(), d.plain->vocab_size());
}

// T 20, mask_prob 0.15: k = 3 positions per sequence, each position selected with probability
// 3/20; selected inputs: [MASK] 0.8, unchanged 0.1 + 0.1/V (the random token may be the original),
// another token 0.1 (1 - 1/V).
TEST(MaskedLm, SelectionAndTheEightyTenTenSplit) {
  const Pair d = datasets();
  const int64_t B = 4000, T = 20, k = 3;
  const Tally r = tally(d, false, B, T, k, 11);
  ASSERT_EQ(r.selected, B * k);
  for (int64_t t = 0; t < T; ++t) expect_binomial(r.per_position[t], B, double(k) / T, "position " + std::to_string(t));
  const double v = static_cast<double>(d.plain->vocab_size());
  expect_binomial(r.as_mask, r.selected, 0.8, "[MASK]");
  expect_binomial(r.unchanged, r.selected, 0.1 + 0.1 / v, "unchanged");
  expect_binomial(r.random, r.selected, 0.1 * (1 - 1 / v), "random token");
}

TEST(MaskedLm, ValidationBatchesAreMaskedTheSameWay) {
  const Pair d = datasets();
  const Tally r = tally(d, true, 500, 20, 3, 12);
  EXPECT_EQ(r.selected, 500 * 3);
}

TEST(MaskedLm, AtLeastOnePositionPerSequence) {
  const Pair d = datasets();
  EXPECT_EQ(tally(d, false, 200, 3, 1, 13).selected, 200);  // round(0.45) = 0, raised to 1
  const Pair half = datasets(0.5);
  EXPECT_EQ(tally(half, false, 200, 9, 5, 14).selected, 200 * 5);  // round(4.5) = 5 (away from zero)
}

TEST(MaskedLm, SameGeneratorStateSameBatchAndStream) {
  const Pair d = datasets();
  Generator a(21), b(21);
  (void)d.masked->sample(false, 8, 16, a);  // move both on by one batch
  (void)d.masked->sample(false, 8, 16, b);
  const Batch x = d.masked->sample(false, 8, 16, a), y = d.masked->sample(false, 8, 16, b);
  EXPECT_EQ(x.inputs.to_ints(), y.inputs.to_ints());
  EXPECT_EQ(x.targets.to_ints(), y.targets.to_ints());
  EXPECT_EQ(a.next_u64(), b.next_u64());
  Generator c(22);
  EXPECT_NE(d.masked->sample(false, 8, 16, c).targets.to_ints(), x.targets.to_ints());
}

TEST(MaskedLm, MakeDatasetWrapsAnySource) {
  DataConfig config;
  config.source = "copy";
  config.copy_length = 4;
  config.copy_vocab = 10;
  const auto plain = make_dataset(config, false), masked = make_dataset(config, true);
  EXPECT_EQ(plain->vocab_size(), 10);
  EXPECT_EQ(masked->vocab_size(), 11);
  Generator gen(3);
  const auto targets = masked->sample(false, 4, 8, gen).targets.to_ints();
  int64_t counted = 0;
  for (const int32_t t : targets) counted += t != -1;
  EXPECT_EQ(counted, 4 * 1);  // round(0.15 * 8) = 1 per sequence
}

TEST(MaskedLm, MaskProbMustBeAFraction) {
  for (const double p : {0.0, 1.0, -0.1}) {
    try {
      (void)datasets(p);
      ADD_FAILURE() << p;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("[masked_lm] mask_prob must be in (0, 1)"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace normlab
