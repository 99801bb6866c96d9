// "Effects against smallest effects of interest (post hoc)" in v4's confirmatory report (issue
// "front door", item 2). v4 registered directions, not sizes; this section leaves every registered
// verdict as it is and prints beside it the estimate against a smallest effect of interest stated
// here, labelled post hoc (one row of kPostHocSesois per kind of statistic, with its reason), the
// learned counts of each arm of a copy-task quality claim (its outcome is bimodal: a run copies or
// stays near chance), and for the equivalence claims the superiority test of the paired differences.
#pragma once
#include <string>
#include <vector>

#include "xiong/confirmatory.h"
#include "xiong/registered_analysis.h"
#include "xiong/registration.h"

namespace normlab::xiong {

// "beyond" (the 95% interval lies wholly beyond +-sesoi), "within" (wholly inside it) or
// "straddles" (neither), for an interval on a log scale when log_scale (a ratio).
std::string effect_against(const Interval& estimate, double sesoi, bool log_scale);

std::string post_hoc_effects(const Registration& reg, const ConfirmatoryRuns& runs,
                             const std::vector<ClaimAnalysis>& analysis, double copy_learned_below);

}  // namespace normlab::xiong
