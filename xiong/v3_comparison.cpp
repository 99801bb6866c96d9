#include "xiong/v3_comparison.h"

#include <cmath>

#include <fmt/format.h>

#include "xiong/report.h"

namespace normlab::xiong {

namespace {

std::string interval_text(double estimate, double low, double high) {
  return fmt::format("{} [{}, {}]", num(estimate), num(low), num(high));
}

double number_or_nan(const nlohmann::json& row, const char* key) {
  return row.contains(key) && row[key].is_number() ? row[key].get<double>() : NAN;
}

// "kept" when every matched v3 row has v4's verdict, else "changed"; a claim without v3 rows is new.
std::string comparison(const ClaimAnalysis& v4, const std::vector<nlohmann::json>& v3) {
  if (v3.empty()) return "new in v4";
  if (v4.verdict == "incomplete") return "not yet decided";
  for (const nlohmann::json& row : v3)
    if (row.value("verdict", "") != v4.verdict) return "changed";
  return "kept";
}

// "; the estimate moved more than 2x (28x smaller)" or "; the estimate changed sign" when the v3
// row of the same id (the same statistic; dotted rows measure others) and v4 differ that much.
std::string moved(const ClaimAnalysis& v4, const std::vector<nlohmann::json>& v3) {
  for (const nlohmann::json& row : v3) {
    const double before = number_or_nan(row, "estimate"), after = v4.estimate.estimate;
    if (row.value("id", "") != v4.claim->id || !std::isfinite(before) || !std::isfinite(after) || before == 0.0) continue;
    const double ratio = after / before;
    if (ratio <= 0.0) return "; the estimate changed sign";
    if (ratio > 2.0 || ratio < 0.5)
      return fmt::format("; the estimate moved more than 2x ({:.2g}x {})", ratio > 1.0 ? ratio : 1.0 / ratio,
                         ratio > 1.0 ? "larger" : "smaller");
  }
  return "";
}

}  // namespace

std::vector<nlohmann::json> v3_rows_of(const std::string& v4_id, const nlohmann::json& v3_verdicts) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& row : v3_verdicts) {
    const std::string id = row.value("id", "");
    if (id == v4_id || id.rfind(v4_id + ".", 0) == 0) out.push_back(row);
  }
  return out;
}

std::string v3_to_v4_table(const std::vector<ClaimAnalysis>& v4, const nlohmann::json& v3_verdicts) {
  std::vector<std::vector<std::string>> rows;
  for (const ClaimAnalysis& a : v4) {
    const std::vector<nlohmann::json> v3 = v3_rows_of(a.claim->id, v3_verdicts);
    std::string v3_text;
    for (const nlohmann::json& row : v3)
      v3_text += fmt::format("{}{}: {} {}", v3_text.empty() ? "" : "; ", row.value("id", ""), row.value("verdict", ""),
                             interval_text(number_or_nan(row, "estimate"), number_or_nan(row, "ci_low"),
                                           number_or_nan(row, "ci_high")));
    rows.push_back({a.claim->id, a.verdict, interval_text(a.estimate.estimate, a.estimate.low, a.estimate.high),
                    v3.empty() ? "-" : v3_text, comparison(a, v3) + moved(a, v3)});
  }
  return md_table({"v4 claim", "v4 verdict", "v4 estimate [95%]", "v3 (id: verdict estimate [95%])", "v3 -> v4"},
                  rows);
}

}  // namespace normlab::xiong
