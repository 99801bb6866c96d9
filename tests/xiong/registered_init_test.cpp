// The init-time claims of protocol v4 (xiong/registered_init.h) decided on synthetic probes with a
// known exponent or layer ratio: each registered primary test reproduces what holds, contradicts
// what does not, and an unknown claim is refused.
#include <gtest/gtest.h>

#include <cmath>

#include "xiong/registered_init.h"

namespace normlab::xiong {
namespace {

const std::string kRegistration = std::string(NORMLAB_SOURCE_DIR) + "/xiong/registration.toml";
const std::vector<int64_t> kDepths = {2, 6, 8, 12, 16, 24, 32, 48};

// Seed s's multiplicative noise (a few percent, differing per seed and depth).
double noise(size_t s, size_t k) { return 1.0 + 0.03 * std::sin(1.7 * static_cast<double>(s) + 0.9 * static_cast<double>(k)); }

// Probes with ||dL/dW2|| = c L^b per placement, and per-layer ratios last/first at L = 6.
nlohmann::json probes(double post_b, double pre_b, double post_ratio, double pre_ratio, int seeds = 10) {
  nlohmann::json t1;
  for (const auto& [placement, b] : {std::pair{std::string("post"), post_b}, {std::string("pre"), pre_b}}) {
    for (int s = 0; s < seeds; ++s) {
      std::vector<double> row;
      for (size_t k = 0; k < kDepths.size(); ++k)
        row.push_back(1.6 * std::pow(static_cast<double>(kDepths[k]), b) * noise(static_cast<size_t>(s), k));
      t1[placement]["w2_last"].push_back(row);
    }
  }
  nlohmann::json profile;
  for (const auto& [placement, r] : {std::pair{std::string("post"), post_ratio}, {std::string("pre"), pre_ratio}})
    for (int s = 0; s < seeds; ++s) {
      std::vector<double> layers;
      for (int l = 0; l < 6; ++l) layers.push_back(std::pow(r, l / 5.0) * (l == 5 ? noise(static_cast<size_t>(s), 0) : 1.0));
      profile[placement].push_back({{"w1_nom", layers}, {"w2_nom", layers}});
    }
  t1["depths"] = kDepths;
  return {{"depths", kDepths}, {"theorem1", t1}, {"profile", profile}};
}

std::string verdict_of(const std::string& id, const nlohmann::json& p) {
  const Registration reg = load_registration(kRegistration);
  return analyse_init_claim(reg, reg.require(id), p).verdict;
}

TEST(RegisteredInit, TheoremOneExponents) {
  const nlohmann::json paper = probes(0.0, -0.5, 1.8, 1.0);
  EXPECT_EQ(verdict_of("E1a", paper), "reproduced");
  EXPECT_EQ(verdict_of("E1b", paper), "reproduced");
  const nlohmann::json wrong = probes(0.5, 0.3, 1.8, 1.0);  // Post-LN grows, Pre-LN grows
  EXPECT_EQ(verdict_of("E1a", wrong), "contradicted");
  EXPECT_EQ(verdict_of("E1b", wrong), "contradicted");
  const Registration reg = load_registration(kRegistration);
  const ClaimAnalysis b = analyse_init_claim(reg, reg.require("E1b"), paper);
  EXPECT_NEAR(b.estimate.estimate, -0.5, 0.02);
  EXPECT_LT(b.primary_p, 1e-6);
  const ClaimAnalysis a = analyse_init_claim(reg, reg.require("E1a"), paper);
  EXPECT_GT(a.decision_interval.low, a.estimate.low - 1e-12);  // the 90% interval inside the 95% one
  EXPECT_LT(a.decision_interval.high, a.estimate.high + 1e-12);
  EXPECT_LT(a.primary_p, 0.05);
  // Every bootstrap draw of a growing Post-LN lies above the margin: the TOST p is 1; flat, no draw
  // does, and the Monte Carlo p is 1 / (draws + 1), not 0.
  EXPECT_EQ(analyse_init_claim(reg, reg.require("E1a"), wrong).primary_p, 1.0);
  EXPECT_NEAR(a.primary_p, 1.0 / 4001, 1e-12);
}

TEST(RegisteredInit, LayerProfileRatios) {
  const nlohmann::json paper = probes(0.0, -0.5, 1.8, 1.0);
  for (const char* id : {"E2a.W1", "E2a.W2", "E2b.W1", "E2b.W2"}) EXPECT_EQ(verdict_of(id, paper), "reproduced") << id;
  const nlohmann::json falling = probes(0.0, -0.5, 0.6, 0.45);  // both fall toward the top
  for (const char* id : {"E2a.W1", "E2a.W2", "E2b.W1", "E2b.W2"}) EXPECT_EQ(verdict_of(id, falling), "contradicted") << id;
  const Registration reg = load_registration(kRegistration);
  EXPECT_NEAR(analyse_init_claim(reg, reg.require("E2a.W1"), paper).estimate.estimate, 1.8, 0.06);
}

TEST(RegisteredInit, RefusesTooFewSeedsAndClaimsItCannotAnalyse) {
  const Registration reg = load_registration(kRegistration);
  EXPECT_THROW(analyse_init_claim(reg, reg.require("E1a"), probes(0, -0.5, 1.8, 1, 4)), Error);
  RegisteredClaim other = reg.require("E1a");
  other.id = "E1z";
  EXPECT_THROW(analyse_init_claim(reg, other, probes(0, -0.5, 1.8, 1)), Error);
  other = reg.require("E1b");
  other.primary_test = "Wilcoxon signed rank";
  EXPECT_THROW(analyse_init_claim(reg, other, probes(0, -0.5, 1.8, 1)), Error);
}

}  // namespace
}  // namespace normlab::xiong
