// The audit of issue "front door" for every registered training claim of v4 (post hoc: it changes
// no registered verdict): each quality claim decided again with the per-run statistic replaced by
// the last evaluation and by the median of the registered window, flagged where a verdict differs
// from the registered one; and the registration's convergence rule (its header: copy task, the
// mean validation loss of the last 20% of a run within 0.02 nats of the 20% before; text task, an
// improvement of less than 2% between them) applied to every run, the share that pass per arm.
#pragma once
#include <map>
#include <string>

#include "xiong/confirmatory.h"
#include "xiong/registration.h"

namespace normlab::xiong {

// The per-run statistics of the audit: the last evaluation, and the median of the evaluations after
// 80% of the run (a diverged run counts as its initial loss, as in final_quality).
double last_evaluation(const RunOutcome& run);
double window_median(const RunOutcome& run);

// Whether a completed run meets its task's convergence rule (above); false for any other run.
bool converged(const RunOutcome& run, const std::string& task);

// Per quality claim whose verdict changes under another statistic: "last evaluation: <verdict>;
// window median: <verdict>" (the ones that differ), by claim id; the front door prints it.
std::map<std::string, std::string> audit_notes(const Registration& reg, const ConfirmatoryRuns& runs,
                                               double copy_learned_below);

// "## Sensitivity and convergence audit (post hoc)": the two tables, each sentence derived from them.
std::string sensitivity_audit(const Registration& reg, const ConfirmatoryRuns& runs, double copy_learned_below);

}  // namespace normlab::xiong
