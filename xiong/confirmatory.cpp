#include "xiong/confirmatory.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "xiong/arms.h"

namespace normlab::xiong {

std::string confirmatory_config(const RegisteredClaim& claim) {
  return claim.task == "text" ? kTextConfigV4 : kCopyConfigV4;
}

void check_horizons(const Context& ctx, const Registration& reg) {
  for (const RegisteredClaim& c : reg.claims) {
    if (c.task == "init") continue;
    for (const TrainPoint& p : reg.runs_of(c)) {
      const int64_t steps = point_config(ctx.config_path(confirmatory_config(c)), p).train.steps;
      NL_CHECK(steps == c.steps, "registration",
               "{} line {}: claim '{}' registers {} steps but its run {} of {} trains {}", reg.path, c.line, c.id,
               c.steps, p.name(), confirmatory_config(c), steps);
    }
  }
}

ConfirmatoryRuns run_confirmatory(const Context& ctx, const Registration& reg,
                                  const std::function<bool(const std::string&)>& selected) {
  check_horizons(ctx, reg);
  std::vector<TrainPoint> copy_points, text_points;
  for (const RegisteredClaim& c : reg.claims) {
    if (c.task == "init" || !selected(c.id)) continue;
    const std::vector<TrainPoint> runs = reg.runs_of(c);
    auto& into = c.task == "text" ? text_points : copy_points;
    into.insert(into.end(), runs.begin(), runs.end());
  }
  ConfirmatoryRuns out;
  out.copy = run_training(ctx, kCopyConfigV4, copy_points, "copy");
  out.text = run_training(ctx, kTextConfigV4, text_points, "text");
  return out;
}

std::string confirmatory_status(const Registration& reg, const ConfirmatoryRuns& runs,
                                const std::function<bool(const std::string&)>& selected) {
  std::vector<std::vector<std::string>> rows;
  for (const RegisteredClaim& c : reg.claims) {
    if (c.task == "init" || !selected(c.id)) continue;
    const TrainingResults& results = c.task == "text" ? runs.text : runs.copy;
    int completed = 0, diverged = 0, failed = 0, missing = 0;
    for (const TrainPoint& p : reg.runs_of(c)) {
      const RunOutcome* r = results.find(p);
      const RunStatus s = r ? r->status : RunStatus::Missing;
      completed += s == RunStatus::Completed;
      diverged += s == RunStatus::Diverged;
      failed += s == RunStatus::Failed;
      missing += s != RunStatus::Completed && s != RunStatus::Diverged && s != RunStatus::Failed;
    }
    rows.push_back({c.id, c.family, fmt::format("{}", fmt::join(c.arms, "; ")), std::to_string(c.seeds),
                    std::to_string(c.steps), std::to_string(completed), std::to_string(diverged),
                    std::to_string(failed), std::to_string(missing)});
  }
  return md_table({"claim", "family", "arms", "seeds", "steps", "completed", "diverged", "failed", "missing"}, rows);
}

}  // namespace normlab::xiong
