// E1 (Theorem 1): the exponent fits over L >= e1_fit_from, the local slopes, the one-sided E1b
// verdict (all on synthetic probe JSON with known answers), and the final LayerNorm's two factors
// on real tiny models against independent references (the model's own loss and residual RMS, the
// head's gradient written out by hand in double).
#include <gtest/gtest.h>

#include "xiong_test_util.h"

#include <cmath>
#include <functional>

#include "autograd/tape.h"
#include "core/error.h"
#include "core/ops.h"
#include "nn/transformer.h"
#include "xiong/probes.h"
#include "xiong/theorem1.h"

namespace normlab::xiong {
namespace {

const std::vector<int64_t> kDepths = {2, 6, 8, 12, 16, 24, 32, 48};

// A probe whose "pre" and "post" w2_last follow y_s(L) = scale_s * f(L) for seed s.
nlohmann::json synthetic_probe(const std::function<double(int seed, double L)>& y, int seeds = 4) {
  nlohmann::json rows = nlohmann::json::array();
  for (int s = 0; s < seeds; ++s) {
    std::vector<double> row;
    for (const int64_t L : kDepths) row.push_back(y(s, static_cast<double>(L)));
    rows.push_back(row);
  }
  return {{"depths", kDepths}, {"post", {{kW2Last, rows}}}, {"pre", {{kW2Last, rows}}}};
}

TEST(E1Fits, LocalSlopesAndFitOfAnExactPowerLaw) {
  const nlohmann::json probe = synthetic_probe([](int s, double L) { return 3.0 * (1 + 0.1 * s) / std::sqrt(L); });
  const std::vector<double> slopes = probe_local_slopes(probe, "pre", kW2Last);
  ASSERT_EQ(slopes.size(), kDepths.size() - 1);
  for (const double v : slopes) EXPECT_NEAR(v, -0.5, 1e-12);
  const Interval fit = fitted_exponent(probe, "pre", kW2Last, 6);
  EXPECT_NEAR(fit.estimate, -0.5, 1e-12);
  EXPECT_NEAR(fit.low, -0.5, 1e-12);
  EXPECT_NEAR(fit.high, -0.5, 1e-12);
}

TEST(E1Fits, LocalSlopesAreBetweenConsecutiveDepths) {
  // L^-0.5 up to L = 12, then L^-1 (continuous): the slopes change exactly at the break.
  const nlohmann::json probe = synthetic_probe(
      [](int, double L) { return L <= 12 ? std::pow(L, -0.5) : std::pow(12.0, 0.5) / L; }, 2);
  const std::vector<double> slopes = probe_local_slopes(probe, "post", kW2Last);
  const std::vector<double> expected = {-0.5, -0.5, -0.5, -1, -1, -1, -1};
  ASSERT_EQ(slopes.size(), expected.size());
  for (size_t i = 0; i < slopes.size(); ++i) EXPECT_NEAR(slopes[i], expected[i], 1e-12) << "slope " << i;
  EXPECT_NEAR(local_slopes({2, 4}, {1.0, 4.0})[0], 2.0, 1e-12);  // y ~ L^2 rises: a positive slope
}

TEST(E1Fits, FitExcludesTheDepthsBelowFitFrom) {
  auto law = [](int s, double L) { return (1 + 0.05 * s) * std::pow(L, -0.3 - 0.02 * s); };
  const nlohmann::json clean = synthetic_probe(law);
  const nlohmann::json wild = synthetic_probe([&](int s, double L) { return L == 2 ? 1000.0 : law(s, L); });
  const Interval a = fitted_exponent(clean, "post", kW2Last, 6), b = fitted_exponent(wild, "post", kW2Last, 6);
  EXPECT_DOUBLE_EQ(a.estimate, b.estimate);
  EXPECT_DOUBLE_EQ(a.low, b.low);
  EXPECT_DOUBLE_EQ(a.high, b.high);
  EXPECT_LT(fitted_exponent(wild, "post", kW2Last, 2).estimate, a.estimate - 1.0);  // the L = 2 point, included
  EXPECT_EQ(fit_range_text(kDepths, 6), "L = 6..48 (7 depths)");
  EXPECT_THROW(fit_indices(kDepths, 48), Error);  // one depth: no slope

  // E1a decides on the fit over L >= 6 and reports the fit over every depth beside it.
  const Verdict v = e1a_verdict(wild, 6);
  EXPECT_DOUBLE_EQ(v.estimate.estimate, a.estimate);
  EXPECT_NE(v.quantity.find("L = 6..48 (7 depths)"), std::string::npos) << v.quantity;
  EXPECT_NE(v.note.find("L = 2..48 (8 depths)"), std::string::npos) << v.note;
  EXPECT_EQ(v.verdict, "contradicted");  // -0.3 .. -0.36 lies wholly outside 0 +- 0.25
  EXPECT_EQ(e1a_verdict(synthetic_probe([](int s, double L) { return std::pow(L, 0.02 * s - 0.03); }), 6).verdict,
            "reproduced");
}

// Pre-LN exponents spread evenly over [lo, hi] across 8 seeds: y_s(L) = L^a_s.
Verdict e1b_of_exponents(double lo, double hi) {
  const nlohmann::json probe =
      synthetic_probe([&](int s, double L) { return std::pow(L, lo + (hi - lo) * s / 7.0); }, 8);
  return e1b_verdict(probe, 6);
}

TEST(E1Verdicts, E1bIsAOneSidedUpperBoundTest) {
  const Verdict steep = e1b_of_exponents(-0.9, -0.6);
  EXPECT_GT(steep.estimate.low, -0.9);
  EXPECT_LT(steep.estimate.high, -0.6);
  EXPECT_EQ(steep.verdict, "reproduced") << interval_text(steep.estimate);  // steeper than -0.5 is not against it
  EXPECT_NE(steep.note.find("steeper"), std::string::npos) << steep.note;
  EXPECT_NE(steep.criterion.find("upper bound, one-sided"), std::string::npos) << steep.criterion;

  const Verdict flat = e1b_of_exponents(-0.2, -0.1);
  EXPECT_LT(flat.estimate.high, -0.1 + 1e-9);
  EXPECT_EQ(flat.verdict, "contradicted") << interval_text(flat.estimate);

  const Verdict straddle = e1b_of_exponents(-0.4, -0.1);
  ASSERT_LT(straddle.estimate.low, -0.25) << interval_text(straddle.estimate);
  ASSERT_GT(straddle.estimate.high, -0.25) << interval_text(straddle.estimate);
  EXPECT_EQ(straddle.verdict, "inconclusive");
  EXPECT_NE(straddle.quantity.find("L = 6..48"), std::string::npos) << straddle.quantity;
}

ModelConfig tiny(const std::string& placement, int64_t layers, uint64_t seed) {
  return tiny_model(placement, layers, seed, 50);
}

// ||dLoss/dy|| for logits = y E^T and the mean cross-entropy, written out in double:
// dLoss/dy = (softmax(logits) - onehot(targets)) E / rows.
double head_gradient_norm(const Tensor& logits, const Tensor& targets, const Tensor& head) {
  const std::vector<double> z = logits.to_vector(), e = head.to_vector(), t = targets.to_vector();
  const int64_t V = head.size(0), C = head.size(1), rows = static_cast<int64_t>(t.size());
  double sum_sq = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double max = -1e300, total = 0;
    for (int64_t v = 0; v < V; ++v) max = std::max(max, z[r * V + v]);
    for (int64_t v = 0; v < V; ++v) total += std::exp(z[r * V + v] - max);
    for (int64_t c = 0; c < C; ++c) {
      double g = 0;
      for (int64_t v = 0; v < V; ++v) {
        const double p = std::exp(z[r * V + v] - max) / total, onehot = v == static_cast<int64_t>(t[r]) ? 1 : 0;
        g += (p - onehot) * e[v * C + c];
      }
      sum_sq += (g / rows) * (g / rows);
    }
  }
  return std::sqrt(sum_sq);
}

// The factors against references that do not go through final_norm_factors' second forward.
void check_factors(const ModelConfig& c, const ProbeBatch& probe) {
  const FinalNormFactors f = final_norm_factors(c, probe, 9);
  TransformerLM model(c);
  if (probe.unit_variance_input) rescale_embeddings_to_unit_variance(model);
  model.set_record_residual_rms(true);
  const auto [ids, targets] = probe_batches(c.vocab_size, probe, 9).front();
  NoGradGuard no_grad;
  const Tensor logits = model.forward(ids).value();
  EXPECT_NEAR(f.loss, model.loss(ids, targets).value().item(), 1e-5);
  Tensor head;
  for (const auto& [name, p] : model.named_parameters())
    if (name == (c.tie_embeddings ? "tok_emb.weight" : "lm_head.weight")) head = p.value();
  EXPECT_NEAR(f.output_grad_norm, head_gradient_norm(logits, targets, head), 1e-5 * f.output_grad_norm);
  if (c.norm_placement == NormPlacement::Pre) {
    EXPECT_EQ(f.site, "final_norm");
    EXPECT_NEAR(f.input_norm, model.residual_rms().back() * std::sqrt(static_cast<double>(c.d_model)),
                1e-4 * f.input_norm);
  } else {
    EXPECT_EQ(f.site, "blocks." + std::to_string(c.n_layers - 1) + ".norm2");
  }
}

TEST(E1Factors, MatchTheModelsLossResidualAndTheHeadGradient) {
  const ProbeBatch one{4, 16, 1, false};
  check_factors(tiny("pre", 3, 1), one);
  check_factors(tiny("post", 3, 2), one);
  ModelConfig fairseq = tiny("pre", 2, 3);
  fairseq.position_embedding = PositionEmbedding::Sinusoidal;
  fairseq.embedding_scale = EmbeddingScale::SqrtD;
  check_factors(fairseq, one);
  fairseq.norm_placement = NormPlacement::Post;
  fairseq.tie_embeddings = false;
  check_factors(fairseq, {4, 16, 1, true});
  ModelConfig rope = tiny("pre", 2, 4);
  rope.position_embedding = PositionEmbedding::Rope;
  check_factors(rope, one);
  ModelConfig sandwich = tiny("sandwich", 2, 1);
  EXPECT_THROW(final_norm_factors(sandwich, one, 1), Error);
}

TEST(E1Factors, PostLnInputIsLemmaTwosSum) {
  // Theory setting (d_ff = d): the last norm2's input h + FFN(h) has ||.||^2 / d near 1.5.
  ModelConfig c = tiny("post", 3, 3);
  c.d_model = 64;
  c.d_ff = 64;
  c.context_length = 32;
  const FinalNormFactors f = final_norm_factors(c, {8, 32, 1, false}, 11);
  EXPECT_NEAR(f.input_norm * f.input_norm / 64.0, 1.5, 0.2);
}

TEST(E1Factors, TinyModelPreLnInputGrowsWithDepth) {
  const std::vector<int64_t> depths = {2, 4, 8};
  const nlohmann::json probe = measure_theorem1(tiny("pre", 2, 1), {4, 16, 1, false}, depths, 2);
  for (const std::string placement : {"post", "pre"})
    for (const std::string& field : {kW2Last, kFinalLnInput, kFinalLnOutputGrad})
      for (const auto& row : seed_rows(probe, placement, field))
        for (const double v : row) EXPECT_TRUE(std::isfinite(v) && v > 0) << placement << " " << field << " " << v;
  const std::vector<double> pre = seed_mean(seed_rows(probe, "pre", kFinalLnInput));
  EXPECT_LT(pre[0], pre[1]);
  EXPECT_LT(pre[1], pre[2]);
  EXPECT_GT(fitted_exponent(probe, "pre", kFinalLnInput, 2).estimate,
            fitted_exponent(probe, "post", kFinalLnInput, 2).estimate + 0.1);
  EXPECT_EQ(probe["post"]["final_ln_site"], "blocks.<L-1>.norm2");
}

TEST(E1TheorySetting, SinusoidalPositionsKeepTheInputAtUnitMeanSquare) {
  for (const PositionEmbedding pos : {PositionEmbedding::Sinusoidal, PositionEmbedding::Learned,
                                      PositionEmbedding::Rope}) {
    ModelConfig c = tiny("pre", 2, 5);
    c.tie_embeddings = false;
    c.embedding_scale = EmbeddingScale::SqrtD;
    c.position_embedding = pos;
    const LayerGrads r = measure_layer_grads(c, {4, 16, 1, true}, 3);
    EXPECT_NEAR(r.residual_sq_per_d.front(), 1.0, 0.15) << enum_name(pos);
  }
}

}  // namespace
}  // namespace normlab::xiong
