#include "xiong/front_door.h"

#include <filesystem>

#include <fmt/format.h>

#include "core/error.h"
#include "core/files.h"
#include "xiong/confirmatory.h"
#include "xiong/outcomes.h"
#include "xiong/report.h"
#include "xiong/sensitivity_audit.h"

namespace normlab::xiong {

namespace {
// The positions of the two markers: begin's line end and end's start; npos when not both, once,
// in order.
std::pair<size_t, size_t> marker_span(const std::string& document) {
  const size_t begin = document.find(kFrontDoorBegin), end = document.find(kFrontDoorEnd);
  const bool once = begin != std::string::npos && end != std::string::npos &&
                    document.find(kFrontDoorBegin, begin + 1) == std::string::npos &&
                    document.find(kFrontDoorEnd, end + 1) == std::string::npos && begin < end;
  if (!once) return {std::string::npos, std::string::npos};
  return {begin + std::string(kFrontDoorBegin).size(), end};
}

std::string verdict_words(const ClaimAnalysis& a, double alpha) {
  const bool family_wise = a.claim->family == "paper" && a.verdict != "incomplete" && a.holm_p < alpha;
  return a.verdict + (family_wise ? ", holds family-wise" : "");
}
}  // namespace

std::string front_door_table(const std::vector<ClaimAnalysis>& analysis, double alpha, const std::string& report,
                             const std::map<std::string, std::string>& post_hoc) {
  std::string md;
  for (const std::string family : {"paper", "exploratory"}) {
    std::vector<std::vector<std::string>> rows;
    for (const ClaimAnalysis& a : analysis)
      if (a.claim->family == family)
        rows.push_back({a.claim->id, a.claim->statement, verdict_words(a, alpha), interval_text(a.estimate),
                        post_hoc.count(a.claim->id) ? post_hoc.at(a.claim->id) : "",
                        fmt::format("{}/{}", a.runs_found, a.runs_expected)});
    if (rows.empty()) continue;
    md += fmt::format("\n**{}** ({}; estimates as [{}]({}) defines each statistic):\n\n",
                      family == "paper" ? "Confirmatory, the paper's claims (Holm over the family)"
                                        : "Exploratory (registered, unadjusted)",
                      family == "paper" ? fmt::format("alpha {} family-wise", alpha) : "no multiplicity adjustment",
                      std::filesystem::path(report).filename().string(), report);
    md += md_table({"claim", "statement", "verdict", "estimate [95% CI]", "post hoc: the verdict under another statistic",
                    "runs"}, rows);
  }
  NL_CHECK(!md.empty(), "front door", "no registered claim to show");
  return md + "\n";
}

std::string studies_table(const std::vector<StudyVerdicts>& studies) {
  std::vector<std::vector<std::string>> rows;
  const auto number = [](const nlohmann::json& row, const char* key) {
    return row.contains(key) && row[key].is_number() ? row[key].get<double>() : NAN;
  };
  for (const StudyVerdicts& study : studies)
    for (const nlohmann::json& row : study.rows) {
      Interval i;
      i.estimate = number(row, "estimate");
      i.low = number(row, "ci_low");
      i.high = number(row, "ci_high");
      i.n = 1;  // valid: interval_text prints it
      rows.push_back({row.value("id", ""), row.value("claim", ""), row.value("verdict", ""), interval_text(i),
                      fmt::format("[{}]({})", study.name, study.report)});
    }
  NL_CHECK(!rows.empty(), "front door", "no study verdicts to show");
  return "\n**Exploratory studies (not registered; each decided by its report's stated rule)**:\n\n" +
         md_table({"claim", "statement", "verdict", "estimate [95% CI]", "study"}, rows) + "\n";
}

std::string with_front_door(const std::string& document, const std::string& table, const std::string& what) {
  const auto [start, end] = marker_span(document);
  NL_CHECK(start != std::string::npos, "front door", "{} needs the line '{}' and, after it, '{}', once each", what,
           kFrontDoorBegin, kFrontDoorEnd);
  return document.substr(0, start) + "\n" + table + document.substr(end);
}

std::string front_door_of(const std::string& document) {
  const auto [start, end] = marker_span(document);
  return start == std::string::npos ? "" : document.substr(start + 1, end - start - 1);
}

std::string front_door_text(const Context& ctx, const Registration& reg, const ConfirmatoryRuns& runs,
                            const std::string& base) {
  const double copy_learned = copy_baseline(ctx.config_path(kCopyConfigV4)).learn_below;
  const std::filesystem::path docs = ctx.source_dir / "docs" / "xiong";
  const auto verdicts = [&](const std::filesystem::path& file) {
    return nlohmann::json::parse(read_whole_file(file, "front door"));
  };
  const std::vector<StudyVerdicts> studies = {
      {"E4 v4", base + "e4-v4/report.md", verdicts(docs / "e4-v4" / "verdicts.json")},
      {"E10", base + "e10-report.md", verdicts(docs / "data" / "e10_verdicts.json")}};
  return front_door_table(confirmatory_analysis(ctx, reg, runs), reg.alpha, base + "confirmatory-v4.md",
                          audit_notes(reg, runs, copy_learned)) +
         studies_table(studies);
}

}  // namespace normlab::xiong
