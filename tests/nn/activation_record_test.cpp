// The forward statistics of nn/activation_record.h on crafted attention scores: the masked keys
// (the future, beyond a sliding window, padded keys) never count, and the entropy is that of the rows given.
#include <gtest/gtest.h>

#include <cmath>

#include "nn/activation_record.h"

namespace normlab {
namespace {

// Scores (1,1,3,3) whose largest entries are hidden by the causal mask or the window.
Tensor crafted_scores() {
  return Tensor::from_vector({1, 50, 40,   // row 0 sees key 0 only
                              2, 3, 30,    // row 1 sees keys 0..1
                              20, 4, 5},   // row 2: keys 0..2 (window 1: keys 1..2)
                             {1, 1, 3, 3}, DType::F64);
}

// Each row uniform over the keys it sees under `window` (0 = all up to the diagonal).
Tensor uniform_causal_probs(int64_t window) {
  std::vector<double> p(9, 0.0);
  for (int i = 0; i < 3; ++i) {
    const int first = window > 0 ? std::max<int>(0, i - static_cast<int>(window)) : 0;
    for (int j = first; j <= i; ++j) p[static_cast<size_t>(i * 3 + j)] = 1.0 / (i - first + 1);
  }
  return Tensor::from_vector(p, {1, 1, 3, 3}, DType::F64);
}

double recorded(const ActivationRecorder& r, const std::string& name) {
  for (const auto& [n, v] : r.values())
    if (n == name) return v;
  ADD_FAILURE() << "no " << name;
  return NAN;
}

TEST(ActivationRecord, CausalLogitMaxIgnoresTheFuture) {
  ActivationRecorder r;
  record_attention(r, "a", crafted_scores(), uniform_causal_probs(0), 0.5, /*causal=*/true, 0);
  EXPECT_DOUBLE_EQ(recorded(r, "a.logit_max"), 0.5 * 20);
  EXPECT_NEAR(recorded(r, "a.entropy"), (std::log(1.0) + std::log(2.0) + std::log(3.0)) / 3, 1e-12);
}

TEST(ActivationRecord, SlidingWindowHidesTheKeysBeforeIt) {
  ActivationRecorder r;
  record_attention(r, "a", crafted_scores(), uniform_causal_probs(1), 1.0, true, /*window=*/1);
  EXPECT_DOUBLE_EQ(recorded(r, "a.logit_max"), 5.0);  // key 0 of row 2 (20) is outside the window
  EXPECT_NEAR(recorded(r, "a.entropy"), (0 + std::log(2.0) + std::log(2.0)) / 3, 1e-12);
}

TEST(ActivationRecord, BidirectionalAttentionSeesEveryKey) {
  ActivationRecorder r;
  record_attention(r, "a", crafted_scores(), uniform_causal_probs(0), 1.0, /*causal=*/false, 0);
  EXPECT_DOUBLE_EQ(recorded(r, "a.logit_max"), 50.0);
}

TEST(ActivationRecord, PaddedKeysNeverCountPerBatchRow) {
  // Two sequences of crafted_scores(), bidirectional: sequence 0 pads keys 1 and 2, sequence 1 key 1.
  const std::vector<double> one = crafted_scores().to_vector();
  std::vector<double> scores = one;
  scores.insert(scores.end(), one.begin(), one.end());
  std::vector<double> probs(18, 0.0);
  for (int i = 0; i < 3; ++i) {
    probs[static_cast<size_t>(i * 3)] = 1.0;                                   // sequence 0: key 0
    probs[static_cast<size_t>(9 + i * 3)] = probs[static_cast<size_t>(9 + i * 3 + 2)] = 0.5;  // sequence 1: keys 0, 2
  }
  ActivationRecorder r;
  record_attention(r, "a", Tensor::from_vector(scores, {2, 1, 3, 3}, DType::F64),
                   Tensor::from_vector(probs, {2, 1, 3, 3}, DType::F64), 1.0, /*causal=*/false, 0,
                   Tensor::from_ints({0, 1, 1, 0, 1, 0}, {2, 3}));
  EXPECT_DOUBLE_EQ(recorded(r, "a.logit_max"), 40.0);  // sequence 1's key 2; the padded 50 is hidden
  EXPECT_NEAR(recorded(r, "a.entropy"), std::log(2.0) / 2, 1e-12);
}

TEST(ActivationRecord, RecordsOnlyWhileInstalledAndNests) {
  EXPECT_EQ(activation_recorder(), nullptr);
  {
    ActivationRecorder outer;
    EXPECT_EQ(activation_recorder(), &outer);
    {
      ActivationRecorder inner;
      EXPECT_EQ(activation_recorder(), &inner);
    }
    EXPECT_EQ(activation_recorder(), &outer);
  }
  EXPECT_EQ(activation_recorder(), nullptr);
}

}  // namespace
}  // namespace normlab
