// The v4 confirmatory runs: every registered training claim's points on its confirmatory seeds
// (xiong/registration.h), trained as resumable sweeps in the suite's directory (copy claims from
// copy_task_v4.toml into DIR/copy, text claims from text_task_v4.toml into DIR/text). Each claim's
// registered horizon must be its runs' length: checked before anything trains.
// `normlab reproduce xiong --confirmatory [--only E3a,...]` runs them; the registered analysis of
// each claim reads them (docs/xiong/README.md, protocol v4).
#pragma once
#include <functional>
#include <string>

#include "xiong/registration.h"
#include "xiong/report.h"
#include "xiong/training.h"

namespace normlab::xiong {

inline constexpr const char* kCopyConfigV4 = "copy_task_v4.toml";
inline constexpr const char* kTextConfigV4 = "text_task_v4.toml";

struct ConfirmatoryRuns {
  TrainingResults copy, text;
};

// The base config of a training claim's task.
std::string confirmatory_config(const RegisteredClaim& claim);

// Throws "[registration] claim 'X' registers N steps but its runs train M" when a claim's horizon
// and its runs' length (the base config's train.steps, or the point's /t<steps>) disagree.
void check_horizons(const Context& ctx, const Registration& reg);

// Trains the runs of every registered training claim for which selected(claim id) holds.
ConfirmatoryRuns run_confirmatory(const Context& ctx, const Registration& reg,
                                  const std::function<bool(const std::string&)>& selected);

// A markdown table: per selected claim, its family, arms, seeds, horizon and how many of its runs
// completed, diverged, failed or are missing.
std::string confirmatory_status(const Registration& reg, const ConfirmatoryRuns& runs,
                                const std::function<bool(const std::string&)>& selected);

}  // namespace normlab::xiong
