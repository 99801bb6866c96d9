// Theorem 1's measurement (measure_theorem1) and its analysis on the probe JSON (theorem1.h).
#include "xiong/theorem1.h"

#include <cmath>

#include <fmt/format.h>

#include "core/error.h"

namespace normlab::xiong {

namespace {

const std::vector<std::string> kPlacements = {"post", "pre"};

// The exponent Theorem 1's Pre-LN bound decays with, and the one-sided test's threshold: half-way
// between flat (0) and the bound's -0.5.
constexpr double kBoundExponent = -0.5, kDecayThreshold = -0.25;

}  // namespace

nlohmann::json measure_theorem1(const ModelConfig& base, const ProbeBatch& probe, const std::vector<int64_t>& depths,
                                int seeds, bool factors) {
  NL_CHECK(seeds >= 1, "theorem1", "needs seeds >= 1, got {}", seeds);
  std::vector<int> list(static_cast<size_t>(seeds));
  for (int s = 1; s <= seeds; ++s) list[static_cast<size_t>(s - 1)] = s;
  return measure_theorem1(base, probe, depths, list, factors);
}

nlohmann::json measure_theorem1(const ModelConfig& base, const ProbeBatch& probe, const std::vector<int64_t>& depths,
                                const std::vector<int>& seeds, bool factors) {
  NL_CHECK(!depths.empty() && !seeds.empty(), "theorem1", "needs depths and seeds, got {} depths, {} seeds",
           depths.size(), seeds.size());
  nlohmann::json out;
  for (const std::string& placement : kPlacements) {
    nlohmann::json block = {{kW2Last, nlohmann::json::array()}, {"residual", nlohmann::json::array()},
                            {"x5", nlohmann::json::array()}};
    if (factors) {
      block[kFinalLnInput] = nlohmann::json::array();
      block[kFinalLnOutputGrad] = nlohmann::json::array();
      block["final_ln_site"] = placement == "pre" ? "final_norm" : "blocks.<L-1>.norm2";
    }
    for (const int seed : seeds) {
      const uint64_t data_seed = 1000 + static_cast<uint64_t>(seed);
      std::vector<double> w2, input, grad;
      for (const int64_t L : depths) {
        const ModelConfig c = probe_model(base, placement, L, seed);
        const LayerGrads r = measure_layer_grads(c, probe, data_seed);
        w2.push_back(r.w2_mean_norm.back());
        if (L == depths.back()) {
          block["residual"].push_back(r.residual_sq_per_d);
          block["x5"].push_back(r.post_ffn_sum_sq_per_d);
        }
        if (!factors) continue;
        const FinalNormFactors f = final_norm_factors(c, probe, data_seed);
        input.push_back(f.input_norm);
        grad.push_back(f.output_grad_norm);
      }
      block[kW2Last].push_back(w2);
      if (factors) {
        block[kFinalLnInput].push_back(input);
        block[kFinalLnOutputGrad].push_back(grad);
      }
    }
    out[placement] = block;
  }
  out["depths"] = depths;
  return out;
}

std::vector<int64_t> probe_depths(const nlohmann::json& probe) {
  NL_CHECK(probe.contains("depths") && probe["depths"].is_array(), "theorem1", "the probe has no \"depths\" list");
  return probe["depths"].get<std::vector<int64_t>>();
}

std::vector<std::vector<double>> seed_rows(const nlohmann::json& probe, const std::string& placement,
                                           const std::string& field, bool theory) {
  const nlohmann::json& top = theory ? probe.value("theory", nlohmann::json::object()) : probe;
  NL_CHECK(top.contains(placement) && top[placement].contains(field), "theorem1",
           "the probe has no \"{}\" for placement '{}'{} (a cache from before it was measured?)", field, placement,
           theory ? " in the theory setting" : "");
  const size_t n = probe_depths(probe).size();
  std::vector<std::vector<double>> rows;
  for (const auto& row : top[placement][field]) {
    NL_CHECK(row.is_array() && row.size() == n, "theorem1", "\"{}\" of '{}': a seed has {} values for {} depths",
             field, placement, row.is_array() ? row.size() : 0, n);
    rows.push_back(row.get<std::vector<double>>());
  }
  return rows;
}

std::vector<double> seed_mean(const std::vector<std::vector<double>>& rows) {
  std::vector<double> mean(rows.empty() ? 0 : rows.front().size(), 0.0);
  for (const auto& row : rows)
    for (size_t i = 0; i < mean.size() && i < row.size(); ++i) mean[i] += row[i] / static_cast<double>(rows.size());
  return mean;
}

std::vector<double> local_slopes(const std::vector<int64_t>& depths, const std::vector<double>& y) {
  NL_CHECK(depths.size() == y.size(), "theorem1", "local_slopes: {} depths but {} values", depths.size(), y.size());
  std::vector<double> out;
  for (size_t i = 0; i + 1 < depths.size(); ++i)
    out.push_back((std::log(y[i + 1]) - std::log(y[i])) /
                  (std::log(static_cast<double>(depths[i + 1])) - std::log(static_cast<double>(depths[i]))));
  return out;
}

std::vector<double> probe_local_slopes(const nlohmann::json& probe, const std::string& placement,
                                       const std::string& field, bool theory) {
  return local_slopes(probe_depths(probe), seed_mean(seed_rows(probe, placement, field, theory)));
}

std::vector<size_t> fit_indices(const std::vector<int64_t>& depths, int64_t fit_from) {
  std::vector<size_t> out;
  for (size_t i = 0; i < depths.size(); ++i)
    if (depths[i] >= fit_from) out.push_back(i);
  NL_CHECK(out.size() >= 2, "theorem1", "a fit over L >= {} needs 2 depths or more, got {}", fit_from, out.size());
  return out;
}

std::string fit_range_text(const std::vector<int64_t>& depths, int64_t fit_from) {
  const std::vector<size_t> idx = fit_indices(depths, fit_from);
  return fmt::format("L = {}..{} ({} depths)", depths[idx.front()], depths[idx.back()], idx.size());
}

std::function<double(const std::vector<int>&)> exponent_statistic(const std::vector<std::vector<double>>& rows,
                                                                 const std::vector<int64_t>& depths, int64_t fit_from) {
  const std::vector<size_t> idx = fit_indices(depths, fit_from);
  std::vector<double> x;
  for (const size_t i : idx) x.push_back(static_cast<double>(depths[i]));
  return [rows, idx, x](const std::vector<int>& seeds) {
    std::vector<double> mean(idx.size(), 0.0);
    for (const int s : seeds)
      for (size_t k = 0; k < idx.size(); ++k)
        mean[k] += rows[static_cast<size_t>(s)].at(idx[k]) / static_cast<double>(seeds.size());
    return loglog_slope(x, mean);
  };
}

Interval exponent_interval(const std::vector<std::vector<double>>& rows, const std::vector<int64_t>& depths,
                           int64_t fit_from) {
  return bootstrap(static_cast<int>(rows.size()), exponent_statistic(rows, depths, fit_from));
}

std::vector<double> per_seed_exponents(const std::vector<std::vector<double>>& rows, const std::vector<int64_t>& depths,
                                       int64_t fit_from) {
  const auto statistic = exponent_statistic(rows, depths, fit_from);
  std::vector<double> out;
  for (size_t s = 0; s < rows.size(); ++s) out.push_back(statistic({static_cast<int>(s)}));
  return out;
}

Interval fitted_exponent(const nlohmann::json& probe, const std::string& placement, const std::string& field,
                         int64_t fit_from, bool theory) {
  return exponent_interval(seed_rows(probe, placement, field, theory), probe_depths(probe), fit_from);
}

Verdict e1a_verdict(const nlohmann::json& probe, int64_t fit_from) {
  const std::vector<int64_t> depths = probe_depths(probe);
  const std::string range = fit_range_text(depths, fit_from);
  Verdict v{"E1a", "Post-LN: last-layer W2 gradient independent of L", "O(d sqrt(ln d)): exponent 0",
            fmt::format("fitted exponent of L over {}, Post-LN", range),
            fitted_exponent(probe, "post", kW2Last, fit_from)};
  v.decide_equivalence(0.0, 0.25);
  const Interval all = fitted_exponent(probe, "post", kW2Last, depths.front());
  v.note = fmt::format("margin: half-way to the Pre-LN law's -0.5; fit over {}: {}; including every depth ({}): {}",
                       range, interval_text(v.estimate, 2), fit_range_text(depths, depths.front()),
                       interval_text(all, 2));
  return v;
}

std::string steeper_than_half_note(const Interval& e) {
  if (!e.valid()) return "no exponent";
  if (e.high < kBoundExponent)
    return fmt::format("the exponent is steeper than the bound's {} (whole interval below it): an upper bound "
                       "allows that",
                       kBoundExponent);
  if (e.low > kBoundExponent)
    return fmt::format("the exponent is shallower than {} (whole interval above it)", kBoundExponent);
  return fmt::format("the exponent's interval contains {}", kBoundExponent);
}

Verdict e1b_verdict(const nlohmann::json& probe, int64_t fit_from) {
  const std::string range = fit_range_text(probe_depths(probe), fit_from);
  Verdict v{"E1b", "Pre-LN: the last-layer W2 gradient decays with L (Theorem 1's O(d sqrt(ln d / L)) bound)",
            "O(d sqrt(ln d / L)): an upper bound decaying like L^-0.5",
            fmt::format("fitted exponent of L over {}, Pre-LN", range),
            fitted_exponent(probe, "pre", kW2Last, fit_from)};
  v.decide_direction(kDecayThreshold, Side::Below);
  v.criterion = "upper bound, one-sided: " + v.criterion +
                " (threshold half-way between flat and the bound's -0.5; steeper than -0.5 does not contradict it)";
  v.note = steeper_than_half_note(v.estimate);
  return v;
}

}  // namespace normlab::xiong
