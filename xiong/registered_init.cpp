#include "xiong/registered_init.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "config/config.h"
#include "core/error.h"
#include "xiong/experiments.h"
#include "xiong/theorem1.h"

namespace normlab::xiong {

namespace {

constexpr int64_t kFitFrom = 6;       // the registered fits: L >= 6
constexpr int64_t kProfileDepth = 6;  // E2's registered stack
constexpr int kResamples = 4000;

std::vector<int> init_seeds(const Registration& reg) {
  int most = 0;
  for (const RegisteredClaim& c : reg.claims)
    if (c.task == "init") most = std::max(most, c.seeds);
  return {reg.confirmatory_seeds.begin(), reg.confirmatory_seeds.begin() + most};
}

nlohmann::json measure_profile(const Context& ctx, const std::vector<int>& seeds) {
  const ModelConfig base = probe_model(ctx);
  nlohmann::json out;
  for (const std::string placement : {"post", "pre"})
    for (const int seed : seeds) {
      const ModelConfig c = probe_model(base, placement, kProfileDepth, seed);
      const LayerGrads r = measure_layer_grads(c, ctx.grids.e2_probe, 2000 + static_cast<uint64_t>(seed));
      out[placement].push_back({{"w1_nom", r.w1_norm_of_mean}, {"w2_nom", r.w2_norm_of_mean}});
    }
  return out;
}

void require_primary(const Registration& reg, const RegisteredClaim& c, const std::string& expected) {
  NL_CHECK(c.primary_test.rfind(expected, 0) == 0, "registration",
           "{} line {}: claim '{}': its primary test '{}' is not the one its analysis computes ('{}...')", reg.path,
           c.line, c.id, c.primary_test, expected);
}

// The first n rows of a [seed][...] array (a claim may use fewer seeds than were measured).
std::vector<std::vector<double>> first_rows(std::vector<std::vector<double>> rows, int n) {
  NL_CHECK(static_cast<int>(rows.size()) >= n, "registration", "the init probes hold {} seeds, a claim needs {}",
           rows.size(), n);
  rows.resize(static_cast<size_t>(n));
  return rows;
}

void analyse_e1a(const RegisteredClaim& c, const std::vector<std::vector<double>>& rows,
                 const std::vector<int64_t>& depths, ClaimAnalysis& out) {
  const auto statistic = exponent_statistic(rows, depths, kFitFrom);
  const std::vector<double> draws = bootstrap_draws(static_cast<int>(rows.size()), statistic, kResamples);
  out.estimate = exponent_interval(rows, depths, kFitFrom);
  out.decision_interval = out.estimate;
  std::tie(out.decision_interval.low, out.decision_interval.high) = percentile_interval(draws, 0.90);
  const double n = static_cast<double>(draws.size());
  const double below = static_cast<double>(std::count_if(draws.begin(), draws.end(), [&](double b) { return b <= c.low; }));
  const double above = static_cast<double>(std::count_if(draws.begin(), draws.end(), [&](double b) { return b >= c.high; }));
  // The Monte Carlo p-value (count + 1) / (draws + 1): never 0 from finitely many draws.
  out.primary_p = n > 0 ? (std::max(below, above) + 1) / (n + 1) : NAN;
  std::vector<std::string> slopes;
  for (const double s : local_slopes(depths, seed_mean(rows))) slopes.push_back(num(s, 2));
  out.secondary = fmt::format("90% bootstrap interval {} against [{}, {}]; local slopes between the depths {}",
                              interval_text(out.decision_interval), num(c.low, 3), num(c.high, 3), fmt::join(slopes, ", "));
}

void analyse_e1b(const std::vector<std::vector<double>>& rows, const std::vector<int64_t>& depths, ClaimAnalysis& out) {
  out.estimate = mean_interval(per_seed_exponents(rows, depths, kFitFrom));
  out.primary_p = out.estimate.p_value;
  const Interval boot = exponent_interval(rows, depths, kFitFrom);
  out.secondary = fmt::format("bootstrap interval of the fit to the seed mean {}; {}", interval_text(boot),
                              steeper_than_half_note(out.estimate));
}

void analyse_e2(const RegisteredClaim& c, const nlohmann::json& seeds, const std::string& measure, ClaimAnalysis& out) {
  std::vector<double> last, first, logs;
  for (size_t s = 0; s < static_cast<size_t>(c.seeds); ++s) {
    const auto v = seeds.at(s).at(measure).get<std::vector<double>>();
    last.push_back(v.back());
    first.push_back(v.front());
    logs.push_back(std::log(v.back() / v.front()));
  }
  out.estimate = log_ratio(last, first);
  out.secondary = fmt::format("exact sign-flip p of the log ratios = {}", num(sign_flip_test(logs).p_value, 3));
  if (c.decision == "direction") {
    out.primary_p = out.estimate.p_value;
    return;
  }
  out.primary_p = tost_paired(logs, std::log(c.low), std::log(c.high)).p_value;
  out.decision_interval = mean_interval_at(logs, 0.90);
  out.decision_interval.estimate = std::exp(out.decision_interval.estimate);
  out.decision_interval.low = std::exp(out.decision_interval.low);
  out.decision_interval.high = std::exp(out.decision_interval.high);
  out.secondary += fmt::format("; 90% interval of the ratio {} against [{}, {}]", interval_text(out.decision_interval),
                               num(c.low, 3), num(c.high, 3));
}

}  // namespace

nlohmann::json measure_init_probes(const Context& ctx, const Registration& reg) {
  const Grids& g = ctx.grids;
  const std::vector<int> seeds = init_seeds(reg);
  const ModelConfig base = probe_model(ctx);
  RunConfig key_config;
  key_config.model = base;
  key_config.model.seed = 0;
  const nlohmann::json key = {{"model", config_fingerprint_text(key_config)}, {"seeds", seeds},
                              {"depths", g.e1_depths}, {"e1_probe", {g.e1_probe.batch, g.e1_probe.context, g.e1_probe.batches}},
                              {"e2_probe", {g.e2_probe.batch, g.e2_probe.context, g.e2_probe.batches}}, {"version", 1}};
  return cached(ctx, "v4_init_probes", key, [&] {
    return nlohmann::json{{"seeds", seeds}, {"depths", g.e1_depths},
                          {"theorem1", measure_theorem1(base, g.e1_probe, g.e1_depths, seeds, false)},
                          {"profile", measure_profile(ctx, seeds)}};
  });
}

ClaimAnalysis analyse_init_claim(const Registration& reg, const RegisteredClaim& c, const nlohmann::json& probes) {
  ClaimAnalysis out;
  out.claim = &c;
  out.runs_expected = out.runs_found = c.seeds;  // probes: one per seed (and depth)
  const std::vector<int64_t> depths = probes.at("depths").get<std::vector<int64_t>>();
  const nlohmann::json& t1 = probes.at("theorem1");
  if (c.id == "E1a") {
    require_primary(reg, c, "percentile bootstrap");
    analyse_e1a(c, first_rows(seed_rows(t1, "post", kW2Last), c.seeds), depths, out);
  } else if (c.id == "E1b") {
    require_primary(reg, c, "one-sample t");
    analyse_e1b(first_rows(seed_rows(t1, "pre", kW2Last), c.seeds), depths, out);
  } else if (c.id.rfind("E2a.", 0) == 0 || c.id.rfind("E2b.", 0) == 0) {
    require_primary(reg, c, "log-ratio t");
    const std::string placement = c.id[2] == 'a' ? "post" : "pre";
    const std::string measure = c.id.substr(4) == "W1" ? "w1_nom" : "w2_nom";
    NL_CHECK(c.id.substr(4) == "W1" || c.id.substr(4) == "W2", "registration", "{} line {}: claim '{}': no weight {}",
             reg.path, c.line, c.id, c.id.substr(4));
    analyse_e2(c, probes.at("profile").at(placement), measure, out);
  } else {
    fail("registration", "{} line {}: init-time claim '{}' has no analysis", reg.path, c.line, c.id);
  }
  out.arms = fmt::format("{} confirmatory seeds ({}..{})", c.seeds, reg.confirmatory_seeds.front(),
                         reg.confirmatory_seeds[static_cast<size_t>(c.seeds - 1)]);
  out.verdict = decide_registered(c, out.primary_p, out.estimate, out.decision_interval, reg.alpha);
  return out;
}

}  // namespace normlab::xiong
