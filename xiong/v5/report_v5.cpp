#include "xiong/v5/report_v5.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <set>

#include <fmt/format.h>

#include "stats/stats.h"
#include "xiong/confirmatory.h"

namespace normlab::xiong {

namespace {

std::string num(double v, int digits = 2) { return std::isfinite(v) ? fmt::format("{:.{}f}", v, digits) : "-"; }

// Seconds since the epoch of "2026-12-06T03:40:00Z" (NaN when it does not read).
double utc_seconds(const std::string& text) {
  std::tm tm{};
  if (!strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) return NAN;
  return static_cast<double>(timegm(&tm));
}

std::string rows_section(const ReportInputsV5& in) {
  int confirmatory = 0;
  std::map<std::string, int> refused;
  std::set<std::string> cpus, crcs;
  for (const RecordRunV5& r : in.record->runs) {
    if (!r.refused.empty()) {
      ++refused[r.refused];
      continue;
    }
    ++confirmatory;
    cpus.insert(r.cpu);
    crcs.insert(r.code_crc32);
  }
  std::string md = "## The record\n\n";
  md += fmt::format("- Registration: `{}`, last changed by commit {} ({}).\n", in.registration_file,
                    in.registration_commit, in.registered_utc.empty() ? "time unknown" : in.registered_utc);
  md += fmt::format("- Frozen build: commit {}; the confirmatory runs' binaries have {} CRC-32 value{}.\n",
                    in.record->frozen_commit.empty() ? "(none recorded)" : in.record->frozen_commit, crcs.size(),
                    crcs.size() == 1 ? "" : "s");
  md += fmt::format("- Rows: {} confirmatory, {} refused.\n", confirmatory, in.record->runs.size() - confirmatory);
  for (const auto& [reason, n] : refused) md += fmt::format("  - refused ({}): {}\n", n, reason);
  for (const std::string& cpu : cpus) md += fmt::format("- CPU: {}\n", cpu);
  return md + "\n";
}

std::string decision_text(const ClaimV5& c) {
  switch (c.decision) {
    case DecisionV5::MinimumEffect: return fmt::format("> {}", num(c.sesoi, 3));
    case DecisionV5::NonInferiority: return fmt::format("> -{}", num(c.sesoi, 3));
    case DecisionV5::Equivalence: return fmt::format("in [{}, {}]", num(c.low, 3), num(c.high, 3));
  }
  return "";
}

std::string claims_section(const ReportInputsV5& in) {
  std::string md = "## The claims\n\n";
  md += "Each estimate is the mean over seeds of the per-seed number (paired by seed), with its 95% t interval; "
        "the registered smallest effect or margin beside it; p is the registered primary test, Holm-adjusted "
        "within the family. Beside the verdict: the sign-flip test of no difference, the median, and the "
        "verdict from the last weights instead of the best checkpoint, and the paired bootstrap of corpus BLEU over the "
        "test sentences of every seed with both arms' translations (pooled; 1000 resamples, 95% percentile "
        "interval).\n\n";
  md += "| claim | family | seeds | estimate [95%] | must be | p (Holm) | verdict | sign-flip p | median | last weights "
        "| pooled sentences [95%] | paper |\n";
  md += "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const ClaimResultV5& r : *in.results) {
    const ClaimV5& c = *r.claim;
    const std::string pooled = std::isfinite(r.pooled_difference)
                                   ? fmt::format("{} [{}, {}]", num(r.pooled_difference), num(r.pooled_low), num(r.pooled_high))
                                   : "-";
    md += fmt::format("| {} | {} | {} of {} | {} [{}, {}] | {} | {} | **{}** | {} | {} | {} | {} | {} |\n", c.id,
                      c.family, r.values.size(), c.seeds, num(r.estimate, 3), num(r.low95, 3), num(r.high95, 3),
                      decision_text(c), num(r.p_holm, 4), r.verdict, num(r.sign_flip_p, 4), num(r.median, 3),
                      r.verdict_last.empty() ? "-" : r.verdict_last, pooled, c.paper);
  }
  md += "\n";
  for (const ClaimResultV5& r : *in.results)
    if (!r.verdict_last.empty() && r.verdict_last != r.verdict && r.verdict != "incomplete")
      md += fmt::format("- **Audit flag**: {} is {} from the best checkpoint and {} from the last weights.\n",
                        r.claim->id, r.verdict, r.verdict_last);
  return md + "\n";
}

// Per arm: runs, diverged, test BLEU (best, last), best epochs, runs still improving at the horizon.
std::string arms_section(const ReportInputsV5& in) {
  const RegistrationV5& reg = *in.reg;
  std::string md = "## The arms\n\n";
  md += fmt::format("Test BLEU from the scored checkpoint ({}) and from the last weights, beam {}, length penalty "
                    "{}, `{}`; a diverged run counts {} BLEU. \"Still improving\": the run's validation BLEU rose by "
                    "0.5 or more over the last 20% of its epochs (the plan's convergence rule). \"Hours\": from each run's first "
                    "start to its finish, summed over the arm's runs; a run resumed over several sittings counts the "
                    "time between them too, so this bounds its compute from above.\n\n",
                    reg.scored_checkpoint, reg.beam, num(reg.length_penalty, 1), reg.bleu_signature,
                    num(reg.diverged_bleu, 0));
  md += "| arm | runs | diverged | test BLEU [95%] | last weights | best epochs | still improving | hours, start to finish |\n";
  md += "|---|---|---|---|---|---|---|---|\n";
  const int64_t window = std::max<int64_t>(1, (reg.epochs + 4) / 5);
  for (const ArmV5& arm : reg.arms) {
    std::vector<double> best, last;
    int diverged = 0, improving = 0;
    double seconds = 0;
    std::set<int64_t> best_epochs;
    for (const RecordRunV5& r : in.record->runs) {
      if (!r.refused.empty() || r.arm != arm.id) continue;
      diverged += r.status == "diverged";
      best.push_back(r.status == "diverged" ? reg.diverged_bleu : r.test_bleu);
      last.push_back(r.status == "diverged" ? reg.diverged_bleu : r.test_bleu_last);
      best_epochs.insert(r.best_epoch);
      seconds += utc_seconds(r.finished_utc) - utc_seconds(r.started_utc);
      const auto it = in.record->curves.find(r.run);
      if (it != in.record->curves.end() && static_cast<int64_t>(it->second.size()) > window) {
        const auto& curve = it->second;
        improving += curve.back().val_bleu - curve[curve.size() - 1 - window].val_bleu >= 0.5;
      }
    }
    if (best.empty()) continue;
    const stats::Interval b = stats::mean_interval(best);
    std::string epochs;
    for (int64_t e : best_epochs) {
      if (!epochs.empty()) epochs += ", ";
      epochs += std::to_string(e);
    }
    md += fmt::format("| {} | {} | {} | {} [{}, {}] | {} | {} | {} of {} | {} |\n", arm.id, best.size(), diverged,
                      num(b.estimate), num(b.low), num(b.high), num(stats::mean_interval(last).estimate), epochs,
                      improving, best.size(), num(seconds / 3600.0, 1));
  }
  return md + "\n";
}

// The paper's Figure 1 as numbers: mean validation BLEU per epoch of each arm over its runs.
std::string figure_section(const ReportInputsV5& in) {
  const RegistrationV5& reg = *in.reg;
  std::string md = "## Figure 1 (validation BLEU by epoch, mean over the confirmatory runs)\n\n| arm |";
  for (int64_t e = 1; e <= reg.epochs; ++e) md += fmt::format(" {} |", e);
  md += "\n|---|";
  for (int64_t e = 1; e <= reg.epochs; ++e) md += "---|";
  md += "\n";
  for (const ArmV5& arm : reg.arms) {
    std::vector<std::vector<double>> by_epoch(static_cast<size_t>(reg.epochs));
    for (const RecordRunV5& r : in.record->runs) {
      if (!r.refused.empty() || r.arm != arm.id) continue;
      const auto it = in.record->curves.find(r.run);
      if (it == in.record->curves.end()) continue;
      for (const CurvePointV5& p : it->second)
        if (p.epoch >= 1 && p.epoch <= reg.epochs) by_epoch[static_cast<size_t>(p.epoch - 1)].push_back(p.val_bleu);
    }
    if (by_epoch[0].empty()) continue;
    md += fmt::format("| {} |", arm.id);
    for (const auto& values : by_epoch)
      md += fmt::format(" {} |", values.empty() ? std::string("-") : num(stats::mean_interval(values).estimate, 1));
    md += "\n";
  }
  return md + "\n";
}

}  // namespace

std::string report_v5(const ReportInputsV5& in) {
  std::string md = "# Xiong v5: the paper's Figure 1 on Bible translation (registered)\n\n";
  md += "Generated by `normlab reproduce xiong-v5 --analyse --record docs/xiong/data/v5` from the committed "
        "record; do not edit. The registration is `xiong/registration_v5.toml`; the design and the pilot are in "
        "`docs/xiong/v5/README.md`.\n\n";
  return md + rows_section(in) + claims_section(in) + arms_section(in) + figure_section(in);
}

std::string analyse_record_v5(const std::string& registration_path, const std::filesystem::path& record_dir) {
  const RegistrationV5 reg = load_registration_v5(registration_path);
  RecordV5 record = read_record_v5(record_dir);
  ReportInputsV5 in;
  in.registration_file = registration_path;
  in.registration_commit = registration_commit(registration_path);
  in.registered_utc = registration_commit_utc(registration_path);
  // Without a known registration time no row can be shown to follow it: every row is refused.
  classify_runs(reg, in.registered_utc.empty() ? "9999" : in.registered_utc, record);
  const std::vector<ClaimResultV5> results = analyse_v5(reg, record);
  in.reg = &reg;
  in.record = &record;
  in.results = &results;
  return report_v5(in);
}

}  // namespace normlab::xiong
