// The v4 confirmatory runs: every registered training claim's points on its confirmatory seeds
// (xiong/registration.h), trained as resumable sweeps in the suite's directory (copy claims from
// copy_task_v4.toml into DIR/copy, text claims from text_task_v4.toml into DIR/text). Each claim's
// registered horizon must be its runs' length: checked before anything trains.
// `normlab reproduce xiong --confirmatory [--only E3a,...]` runs them; the registered analysis of
// each claim reads them (docs/xiong/README.md, protocol v4).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "xiong/registration.h"
#include "xiong/report.h"
#include "xiong/training.h"

namespace normlab::xiong {

inline constexpr const char* kCopyConfigV4 = "copy_task_v4.toml";
inline constexpr const char* kTextConfigV4 = "text_task_v4.toml";

struct ConfirmatoryRuns {
  TrainingResults copy, text;
  std::string source;  // where they were read: "the run directories in DIR" or "the record in DIR"
};

// The base config of a training claim's task.
std::string confirmatory_config(const RegisteredClaim& claim);

// Throws "[registration] claim 'X' registers N steps but its runs train M" when a claim's horizon
// and its runs' length (the base config's train.steps, or the point's /t<steps>) disagree.
void check_horizons(const Context& ctx, const Registration& reg);

// Trains the runs of every registered training claim for which selected(claim id) holds.
ConfirmatoryRuns run_confirmatory(const Context& ctx, const Registration& reg,
                                  const std::function<bool(const std::string&)>& selected);

// The points of task ("copy" | "text") that the claims with selected(claim id) register.
std::vector<TrainPoint> task_runs(const Registration& reg, const std::string& task,
                                  const std::function<bool(const std::string&)>& selected);

// The suite's one divergence rule (1.5 ln V after step 100, outcomes.h) on both tasks' runs.
void apply_divergence_rules(const Context& ctx, ConfirmatoryRuns& runs);

// The runs of every registered training claim as they are in ctx.out_dir (nothing trained;
// training.h read_training), with the suite's divergence rule applied.
ConfirmatoryRuns read_confirmatory(const Context& ctx, const Registration& reg);

struct Baseline;       // xiong/outcomes.h
struct ClaimAnalysis;  // xiong/registered_analysis.h (which includes this header)

// The registered analysis of every claim on `runs` (registered_analysis.h), the init-time claims
// from the probes (measured, or read from the cache ctx.out_dir/cache).
std::vector<ClaimAnalysis> confirmatory_analysis(const Context& ctx, const Registration& reg,
                                                 const ConfirmatoryRuns& runs);

// confirmatory.md: the registration (file, protocol, the commit that last changed it), the runs'
// status, the registered analysis of every claim (registered_analysis.h), the text arms against
// order-0..3 Markov models of the same validation split, and the v3 -> v4 table.
std::string confirmatory_report(const Context& ctx, const Registration& reg, const ConfirmatoryRuns& runs,
                                const std::function<bool(const std::string&)>& selected);

// "<commit> (<date>)" of the last commit that changed the registration, with " - modified since"
// when the file differs from it; "unknown (...)" outside a git checkout.
std::string registration_commit(const std::string& registration_path);
// The committer time of that commit in UTC, "2026-12-06T03:40:00Z" ("" when unknown).
std::string registration_commit_utc(const std::string& registration_path);

// The sentence under the text task's Markov table: the best arm (`arm`, its final `loss`) beside
// the Markov models of `orders` (markov[i] of order orders[i]), the ones it is below and the ones
// it loses to, and, when it loses to any, the shortest context that predicts better; "" when
// `loss` is not finite (no text arm finished).
std::string markov_sentence(const std::string& arm, double loss, const std::vector<Baseline>& markov,
                            const std::vector<int>& orders);

// A markdown table: per selected claim, its family, arms, seeds, horizon and how many of its runs
// completed, diverged, failed or are missing.
std::string confirmatory_status(const Registration& reg, const ConfirmatoryRuns& runs,
                                const std::function<bool(const std::string&)>& selected);

}  // namespace normlab::xiong
