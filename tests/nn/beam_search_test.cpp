// beam_search against independent references: greedy argmax decoding, and an exhaustive
// enumeration of every sequence for a scorer small enough to list them all.
#include "nn/beam_search.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace normlab {
namespace {

constexpr int32_t kEos = 0;

// log-softmax of pseudo-random logits that depend on the whole prefix (its length and tokens).
std::vector<double> table_log_probs(const std::vector<int32_t>& prefix, int64_t vocab, uint64_t salt) {
  uint64_t h = 1469598103934665603ULL ^ salt;
  for (int32_t t : prefix) h = (h ^ static_cast<uint64_t>(t + 7)) * 1099511628211ULL;
  h = (h ^ prefix.size()) * 1099511628211ULL;
  std::vector<double> logits(static_cast<size_t>(vocab));
  double top = -1e300;
  for (auto& z : logits) {
    h = h * 6364136223846793005ULL + 1442695040888963407ULL;
    z = 3.0 * static_cast<double>(h >> 11) / 9007199254740992.0;  // [0, 3)
    top = std::max(top, z);
  }
  double total = 0.0;
  for (double z : logits) total += std::exp(z - top);
  for (auto& z : logits) z = z - top - std::log(total);
  return logits;
}

struct TableScorer {
  int64_t vocab;
  uint64_t salt;
  std::vector<std::vector<int32_t>> seen;  // every prefix the search asked about
  std::vector<std::vector<double>> operator()(const std::vector<std::vector<int32_t>>& prefixes) {
    std::vector<std::vector<double>> rows;
    for (const auto& p : prefixes) {
      seen.push_back(p);
      rows.push_back(table_log_probs(p, vocab, salt));
    }
    return rows;
  }
};

NextTokenScorer as_scorer(TableScorer& table) {
  return [&table](const std::vector<std::vector<int32_t>>& prefixes) { return table(prefixes); };
}

double normalized(double log_prob, size_t length, double penalty) {
  return log_prob / std::pow(static_cast<double>(length), penalty);
}

// Every sequence of at most max_length tokens that ends in EOS (or is cut at max_length and ends
// in a forced EOS), with its log-probability; the best normalized score.
Hypothesis exhaustive_best(int64_t vocab, uint64_t salt, int64_t max_length, double penalty) {
  Hypothesis best;
  best.score = -1e300;
  std::function<void(std::vector<int32_t>, double)> walk = [&](std::vector<int32_t> prefix, double lp) {
    const std::vector<double> row = table_log_probs(prefix, vocab, salt);
    for (int32_t v = 0; v < vocab; ++v) {
      std::vector<int32_t> tokens = prefix;
      const bool last = static_cast<int64_t>(prefix.size()) + 1 == max_length;
      if (v != kEos && !last) {
        tokens.push_back(v);
        walk(tokens, lp + row[static_cast<size_t>(v)]);
        continue;
      }
      if (v != kEos) continue;  // at the last step only EOS (forced) ends a sequence
      tokens.push_back(kEos);
      const double lp_end = lp + row[static_cast<size_t>(kEos)];
      const double score = normalized(lp_end, tokens.size(), penalty);
      if (score > best.score) best = {tokens, lp_end, score};
    }
  };
  walk({}, 0.0);
  return best;
}

TEST(BeamSearch, BeamOfOneIsGreedyArgmax) {
  for (uint64_t salt = 1; salt <= 20; ++salt) {
    TableScorer table{6, salt, {}};
    const std::vector<Hypothesis> out = beam_search(as_scorer(table), {1, 12, 1.0, kEos});
    ASSERT_EQ(out.size(), 1u);
    // Reference: take the argmax token until it is EOS or the length runs out.
    std::vector<int32_t> tokens;
    double lp = 0.0;
    for (int64_t step = 1; step <= 12; ++step) {
      const std::vector<double> row = table_log_probs(tokens, 6, salt);
      int32_t best = 0;
      for (int32_t v = 1; v < 6; ++v)
        if (row[static_cast<size_t>(v)] > row[static_cast<size_t>(best)]) best = v;
      if (step == 12) best = kEos;
      tokens.push_back(best);
      lp += row[static_cast<size_t>(best)];
      if (best == kEos) break;
    }
    EXPECT_EQ(out[0].tokens, tokens) << "salt " << salt;
    EXPECT_NEAR(out[0].log_prob, lp, 1e-12);
  }
}

TEST(BeamSearch, WideBeamFindsTheExhaustiveOptimum) {
  for (double penalty : {0.0, 1.0, 2.0})
    for (uint64_t salt = 1; salt <= 10; ++salt) {
      TableScorer table{3, salt, {}};
      const std::vector<Hypothesis> out = beam_search(as_scorer(table), {64, 5, penalty, kEos});
      const Hypothesis best = exhaustive_best(3, salt, 5, penalty);
      ASSERT_FALSE(out.empty());
      EXPECT_EQ(out[0].tokens, best.tokens) << "salt " << salt << " penalty " << penalty;
      EXPECT_NEAR(out[0].score, best.score, 1e-12);
      for (size_t i = 1; i < out.size(); ++i) EXPECT_GE(out[i - 1].score, out[i].score);
    }
}

TEST(BeamSearch, FinishedHypothesesNeverGrow) {
  for (uint64_t salt = 1; salt <= 20; ++salt) {
    TableScorer table{5, salt, {}};
    const std::vector<Hypothesis> out = beam_search(as_scorer(table), {4, 10, 1.0, kEos});
    for (const auto& prefix : table.seen)
      for (int32_t t : prefix) ASSERT_NE(t, kEos) << "a finished hypothesis was extended (salt " << salt << ")";
    for (const Hypothesis& h : out) {
      ASSERT_FALSE(h.tokens.empty());
      EXPECT_EQ(h.tokens.back(), kEos);
      EXPECT_LE(h.tokens.size(), 10u);
      // The stored log-probability is the sum along the sequence.
      double lp = 0.0;
      std::vector<int32_t> prefix;
      for (int32_t t : h.tokens) {
        lp += table_log_probs(prefix, 5, salt)[static_cast<size_t>(t)];
        prefix.push_back(t);
      }
      EXPECT_NEAR(h.log_prob, lp, 1e-12);
      EXPECT_NEAR(h.score, h.log_prob / static_cast<double>(h.tokens.size()), 1e-12);
    }
  }
}

TEST(BeamSearch, LengthRunsOutIntoAForcedEos) {
  // A scorer whose EOS is nearly impossible: every hypothesis is cut at max_length.
  const NextTokenScorer never_eos = [](const std::vector<std::vector<int32_t>>& prefixes) {
    return std::vector<std::vector<double>>(prefixes.size(), {-50.0, std::log(0.6), std::log(0.4)});
  };
  const std::vector<Hypothesis> out = beam_search(never_eos, {2, 4, 1.0, kEos});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].tokens, (std::vector<int32_t>{1, 1, 1, kEos}));
  EXPECT_NEAR(out[0].log_prob, 3 * std::log(0.6) - 50.0, 1e-12);
  EXPECT_EQ(out[1].tokens.size(), 4u);
}

TEST(BeamSearch, LengthPenaltyChangesTheWinner) {
  // [EOS] has log 0.5; [1, EOS] has log 0.45 + log 0.95, lower in sum but higher per token.
  const NextTokenScorer scorer = [](const std::vector<std::vector<int32_t>>& prefixes) {
    std::vector<std::vector<double>> rows;
    for (const auto& p : prefixes)
      rows.push_back(p.empty() ? std::vector<double>{std::log(0.5), std::log(0.45), std::log(0.05)}
                               : std::vector<double>{std::log(0.95), std::log(0.04), std::log(0.01)});
    return rows;
  };
  const auto raw = beam_search(scorer, {2, 5, 0.0, kEos});
  const auto average = beam_search(scorer, {2, 5, 1.0, kEos});
  EXPECT_EQ(raw[0].tokens, (std::vector<int32_t>{kEos}));
  EXPECT_EQ(average[0].tokens, (std::vector<int32_t>{1, kEos}));
}

TEST(BeamSearch, RejectsBadOptionsAndScorers) {
  TableScorer table{4, 1, {}};
  EXPECT_THROW(beam_search(as_scorer(table), {0, 5, 1.0, kEos}), std::exception);
  EXPECT_THROW(beam_search(as_scorer(table), {2, 0, 1.0, kEos}), std::exception);
  EXPECT_THROW(beam_search(as_scorer(table), {2, 5, 1.0, 9}), std::exception);
  const NextTokenScorer short_rows = [](const std::vector<std::vector<int32_t>>&) {
    return std::vector<std::vector<double>>{};
  };
  try {
    beam_search(short_rows, {2, 5, 1.0, kEos});
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("[beam_search]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace normlab
