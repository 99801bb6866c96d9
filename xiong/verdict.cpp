#include "xiong/verdict.h"

#include <fmt/format.h>

namespace normlab::xiong {

void Verdict::decide_direction(double null, Side predicted) {
  null_value = null;
  const double null_value = null;
  const bool above = predicted == Side::Above;
  criterion = fmt::format("reproduced if the 95% CI lies {} {}, contradicted if it lies {} it, else inconclusive",
                          above ? "above" : "below", null_value, above ? "below" : "above");
  if (!estimate.valid()) {
    verdict = "inconclusive";
    return;
  }
  const bool lies_above = estimate.low > null_value, lies_below = estimate.high < null_value;
  if (above ? lies_above : lies_below) verdict = "reproduced";
  else if (above ? lies_below : lies_above) verdict = "contradicted";
  else verdict = "inconclusive";
}

void Verdict::decide_equivalence(double center, double margin) {
  decide_within(center - margin, center + margin);
  criterion += fmt::format(" ({} ± {})", center, margin);
}

double Verdict::p_value() const {
  if (!std::isfinite(null_value) || !estimate.valid() || !std::isfinite(estimate.estimate)) return NAN;
  if (estimate.method == "t" || estimate.method == "paired t" || estimate.method == "log-ratio t") {
    if (estimate.n < 2) return NAN;
    const bool log_scale = estimate.method == "log-ratio t";
    if (log_scale && !(null_value > 0 && estimate.low > 0)) return NAN;
    auto scale = [log_scale](double v) { return log_scale ? std::log(v) : v; };
    const double se = (scale(estimate.high) - scale(estimate.low)) / (2 * t_quantile_975(estimate.n - 1));
    const double diff = scale(estimate.estimate) - scale(null_value);
    if (se == 0) return diff == 0 ? 1.0 : 0.0;
    return t_two_sided_p(diff / se, estimate.n - 1);
  }
  return estimate.p_value;  // Kaplan-Meier comparisons carry the log-rank p; NaN elsewhere
}

void Verdict::decide_within(double low, double high) {
  null_value = NAN;  // an equivalence claim has no p-value here (see p_value)
  criterion = fmt::format("reproduced if the 95% CI lies inside [{:.4g}, {:.4g}], contradicted if it lies wholly "
                          "outside, else inconclusive", low, high);
  if (!estimate.valid()) {
    verdict = "inconclusive";
    return;
  }
  if (estimate.low >= low && estimate.high <= high) verdict = "reproduced";
  else if (estimate.high < low || estimate.low > high) verdict = "contradicted";
  else verdict = "inconclusive";
}

nlohmann::json Verdict::to_json() const {
  auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"id", id},
          {"claim", claim},
          {"paper", paper},
          {"quantity", quantity},
          {"n_seeds", estimate.n},
          {"steps", steps},
          {"estimate", number(estimate.estimate)},
          {"ci_low", number(estimate.low)},
          {"ci_high", number(estimate.high)},
          {"ci_method", estimate.method},
          {"criterion", criterion},
          {"verdict", verdict},
          {"note", note},
          {"null_value", number(null_value)},
          {"p_value", number(p_value())},
          {"task", task},
          {"schedule", schedule}};
}

Verdict Verdict::from_json(const nlohmann::json& j) {
  auto text = [&j](const char* key) { return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : ""; };
  auto number = [&j](const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN; };
  Verdict v;
  v.id = text("id");
  v.claim = text("claim");
  v.paper = text("paper");
  v.quantity = text("quantity");
  v.estimate = {number("estimate"), number("ci_low"), number("ci_high"),
                j.contains("n_seeds") && j["n_seeds"].is_number_integer() ? j["n_seeds"].get<int>() : 0,
                text("ci_method")};
  v.estimate.p_value = v.estimate.method.find("Kaplan") != std::string::npos || v.estimate.method.find("KM") != std::string::npos
                           ? number("p_value") : NAN;
  v.steps = j.contains("steps") && j["steps"].is_number_integer() ? j["steps"].get<int64_t>() : 0;
  v.criterion = text("criterion");
  v.verdict = text("verdict");
  v.note = text("note");
  v.task = text("task");
  v.schedule = text("schedule");
  v.null_value = number("null_value");
  return v;
}

}  // namespace normlab::xiong
