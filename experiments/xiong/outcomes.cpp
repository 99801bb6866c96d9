#include "experiments/xiong/outcomes.h"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "experiments/config.h"

namespace normlab::xiong {

std::string CopyThresholds::describe() const {
  return fmt::format("A run *learned* if its final validation loss is <= {}, and *failed* if its final loss "
                     "(capped at the loss at init; a diverged run counts as failed) is >= {} (chance level: {}).",
                     num(learn_below), num(fail_above), num(chance));
}

CopyThresholds copy_thresholds(const Context& ctx) {
  const RunConfig c = load_config(ctx.config_path(ctx.grids.copy_config));
  CopyThresholds th;
  th.chance = std::log(static_cast<double>(c.data.copy_vocab - 1));
  th.fail_above = th.chance - 0.3;
  th.learn_below = th.chance / 2;
  return th;
}

double copy_chance_loss(const Context& ctx) { return copy_thresholds(ctx).chance; }

CopyThresholds text_thresholds(double initial_loss) {
  CopyThresholds th;
  th.chance = initial_loss;
  th.fail_above = initial_loss - 0.3;
  th.learn_below = initial_loss / 2;
  return th;
}

std::string GroupSummary::final_text() const { return pm(capped, 3); }
std::string GroupSummary::learned_text() const { return fmt::format("{}/{}", learned, n); }
std::string GroupSummary::diverged_text() const {
  if (diverged == 0) return fmt::format("0/{}", n);
  return fmt::format("{}/{} (step {})", diverged, n, fmt::join(diverged_at, ", "));
}

GroupSummary summarize(const std::vector<const RunOutcome*>& runs, const CopyThresholds& th) {
  GroupSummary s;
  std::vector<double> capped;
  for (const RunOutcome* r : runs) {
    ++s.n;
    const double c = r->capped_final();
    capped.push_back(c);
    if (r->status == "diverged") {
      ++s.diverged;
      s.diverged_at.push_back(r->diverged_step);
    }
    if (r->ok() && r->final_val <= th.learn_below) ++s.learned;
    if (r->status == "diverged" || !std::isfinite(c) || c >= th.fail_above) ++s.failed;
  }
  s.capped = stats_of(capped);
  return s;
}

}  // namespace normlab::xiong
