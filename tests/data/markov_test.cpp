// The Markov baselines (data/markov.h): Witten-Bell probabilities by hand, normalisation, and the
// cross-entropy of streams whose answer is known.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "core/random.h"
#include "data/markov.h"

namespace normlab {
namespace {

// Order 0 on "a a b" (a = 0, b = 1, V = 2): c = 3, N = 2, so
//   P(a) = (2 + 2 * 1/2) / (3 + 2) = 0.6,  P(b) = (1 + 2 * 1/2) / 5 = 0.4.
TEST(Markov, OrderZeroIsWittenBellByHand) {
  const MarkovModel m({0, 0, 1}, 2, 0);
  const std::vector<int32_t> eval = {0, 1};
  EXPECT_NEAR(m.probability(eval, 0, 0), 0.6, 1e-15);
  EXPECT_NEAR(m.probability(eval, 1, 1), 0.4, 1e-15);
  EXPECT_NEAR(m.cross_entropy(eval), -(std::log(0.6) + std::log(0.4)) / 2, 1e-15);
}

// Order 1 on "a a b" with V = 3 (c never seen). P_0: c = 3, N = 2:
//   P_0(a) = (2 + 2/3) / 5 = 8/15,  P_0(b) = (1 + 2/3) / 5 = 1/3,  P_0(c) = (2/3) / 5 = 2/15.
// History "a": followed by a once and b once: c = 2, N = 2:
//   P_1(b | a) = (1 + 2 P_0(b)) / 4 = (1 + 2/3) / 4 = 5/12;  P_1(c | a) = (2 P_0(c)) / 4 = 1/15.
// History "b" was never followed by anything: P_1(w | b) = P_0(w).
TEST(Markov, OrderOneInterpolatesWithTheLowerOrder) {
  const MarkovModel m({0, 0, 1}, 3, 1);
  const std::vector<int32_t> after_a = {0, 1}, after_a_c = {0, 2}, after_b = {1, 0};
  EXPECT_NEAR(m.probability(after_a, 1, 1), 5.0 / 12.0, 1e-15);
  EXPECT_NEAR(m.probability(after_a_c, 1, 2), 1.0 / 15.0, 1e-15);
  EXPECT_NEAR(m.probability(after_b, 1, 0), 8.0 / 15.0, 1e-15);
  EXPECT_NEAR(m.probability(after_a, 0, 0), 8.0 / 15.0, 1e-15);  // the first token: no history
}

// Every history's distribution sums to 1 over the vocabulary, seen histories or not.
TEST(Markov, ProbabilitiesSumToOne) {
  Generator gen(3);
  std::vector<int32_t> train(2000);
  for (auto& t : train) t = static_cast<int32_t>(gen.below(7) * gen.below(2));  // skewed, some pairs unseen
  for (int order = 0; order <= 3; ++order) {
    const MarkovModel m(train, 9, order);  // ids 7 and 8 never occur
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<int32_t> stream(5);
      for (auto& t : stream) t = static_cast<int32_t>(gen.below(9));
      double sum = 0;
      for (int32_t w = 0; w < 9; ++w) {
        stream[4] = w;
        const double p = m.probability(stream, 4, w);
        EXPECT_GT(p, 0.0);
        sum += p;
      }
      EXPECT_NEAR(sum, 1.0, 1e-12) << "order " << order;
    }
  }
}

// A deterministic cycle a b c a b c ...: order 0 cannot do better than about ln 3, order 1 predicts
// each token nearly surely; the loss falls with the order and stays above 0.
TEST(Markov, HigherOrderLearnsADeterministicCycle) {
  std::vector<int32_t> cycle;
  for (int i = 0; i < 3000; ++i) cycle.push_back(i % 3);
  const double h0 = MarkovModel(cycle, 3, 0).cross_entropy(cycle);
  const double h1 = MarkovModel(cycle, 3, 1).cross_entropy(cycle);
  EXPECT_NEAR(h0, std::log(3.0), 1e-3);
  EXPECT_LT(h1, 0.01);
  EXPECT_GT(h1, 0.0);
}

TEST(Markov, RejectsTokensOutsideTheVocabularyAndOverflowingKeys) {
  EXPECT_THROW(MarkovModel({0, 3}, 3, 1), Error);
  EXPECT_THROW(MarkovModel({0, 1}, 3, -1), Error);
  EXPECT_THROW(MarkovModel({0, 1}, 100000, 4), Error);  // 1e25 keys
  const MarkovModel m({0, 1}, 2, 1);
  EXPECT_THROW((void)m.cross_entropy({0, 5}), Error);
  EXPECT_THROW((void)m.cross_entropy({}), Error);
}

}  // namespace
}  // namespace normlab
