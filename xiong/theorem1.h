// Theorem 1 (E1) measured and analysed: the probe JSON, exponent fits over a depth range, local
// slopes and the verdicts E1a / E1b, as functions of the JSON so that tests can drive them with
// synthetic probes. The probe (theorem1_probe caches it; measure_theorem1 computes it):
//   {"depths": [L_0, ..., L_{n-1}],
//    "post" | "pre": {"w2_last":              [seed][depth]  ||dLoss/dW2||_F, last layer's FFN
//                     "final_ln_input":       [seed][depth]  ||x||_F / sqrt(rows) entering the last LN
//                     "final_ln_output_grad": [seed][depth]  ||dLoss/dy||_F at that LN's output
//                     "final_ln_site":        "final_norm" | "blocks.<L-1>.norm2" (probes.h)
//                     "residual": [seed][l], "x5": [seed][l]   (Lemma 2, at the largest depth)},
//    "theory": {"post" | "pre": the same, in the theory setting}}
// Exponents: least-squares slope of log(seed-mean value) on log(L) over the depths >= fit_from,
// with a percentile bootstrap interval over seeds (stats/stats.h).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nn/model_config.h"
#include "xiong/probes.h"
#include "xiong/verdict.h"

namespace normlab::xiong {

// The per-depth fields of a placement's block.
inline const std::string kW2Last = "w2_last", kFinalLnInput = "final_ln_input",
                         kFinalLnOutputGrad = "final_ln_output_grad";

// For "post" and "pre": each seed (1 .. seeds) at each depth of `base` with that placement, the
// fields above (Lemma 2's "residual" and "x5" at the largest depth). With `factors` false the two
// final-LN fields are left out (their second forward costs about one more forward pass).
nlohmann::json measure_theorem1(const ModelConfig& base, const ProbeBatch& probe, const std::vector<int64_t>& depths,
                                int seeds, bool factors = true);
// The same for the given seeds (protocol v4: the confirmatory ones).
nlohmann::json measure_theorem1(const ModelConfig& base, const ProbeBatch& probe, const std::vector<int64_t>& depths,
                                const std::vector<int>& seeds, bool factors = true);

std::vector<int64_t> probe_depths(const nlohmann::json& probe);
// [seed][depth] values of `field` for `placement` (theory: the theory-setting block). Fails
// ("[theorem1] ...") when the field is missing or a row's length is not the number of depths.
std::vector<std::vector<double>> seed_rows(const nlohmann::json& probe, const std::string& placement,
                                           const std::string& field, bool theory = false);
// The mean over seeds at each depth.
std::vector<double> seed_mean(const std::vector<std::vector<double>>& rows);
// (log y_{i+1} - log y_i) / (log L_{i+1} - log L_i) between consecutive depths: n - 1 values.
std::vector<double> local_slopes(const std::vector<int64_t>& depths, const std::vector<double>& y);
// local_slopes of the seed mean of `field`.
std::vector<double> probe_local_slopes(const nlohmann::json& probe, const std::string& placement,
                                       const std::string& field, bool theory = false);
// The positions of the depths >= fit_from. Fails when fewer than 2 remain (no slope).
std::vector<size_t> fit_indices(const std::vector<int64_t>& depths, int64_t fit_from);
// "L = 6..48 (7 depths)".
std::string fit_range_text(const std::vector<int64_t>& depths, int64_t fit_from);
// The exponent of L fitted to the mean over the given seeds (indices into rows [seed][depth], repeats
// allowed) at the depths >= fit_from: the statistic that exponent_interval bootstraps.
std::function<double(const std::vector<int>&)> exponent_statistic(const std::vector<std::vector<double>>& rows,
                                                                 const std::vector<int64_t>& depths, int64_t fit_from);
// Each seed's own fitted exponent (E1b's one-sample t).
std::vector<double> per_seed_exponents(const std::vector<std::vector<double>>& rows, const std::vector<int64_t>& depths,
                                       int64_t fit_from);
// The fitted exponent of L over the depths >= fit_from of rows [seed][depth], bootstrap over seeds.
Interval exponent_interval(const std::vector<std::vector<double>>& rows, const std::vector<int64_t>& depths,
                           int64_t fit_from);
// exponent_interval of `field` of the probe.
Interval fitted_exponent(const nlohmann::json& probe, const std::string& placement, const std::string& field,
                         int64_t fit_from, bool theory = false);

// E1a: Post-LN flat, the exponent over L >= fit_from within 0 ± 0.25; its note gives the fit over
// every depth beside it.
Verdict e1a_verdict(const nlohmann::json& probe, int64_t fit_from);
// E1b: Theorem 1's Pre-LN bound is an upper bound, tested one-sided: reproduced if the exponent's
// whole interval lies below -0.25 ("decays with L"), contradicted if wholly above; its note says
// whether the exponent is steeper than -0.5 (which does not contradict an upper bound).
Verdict e1b_verdict(const nlohmann::json& probe, int64_t fit_from);
// "steeper than -0.5 ..." / "not steeper ..." / "consistent with -0.5 ..." for an exponent interval.
std::string steeper_than_half_note(const Interval& exponent);

}  // namespace normlab::xiong
