// Shared by the warmup study's files (e3_warmup.cpp: the copy task's grid and verdicts;
// e3_time.cpp: time to a quality; e3_text.cpp: the text task): the arms, their seeds, the tables
// that show every arm's schedule, cumulative learning rate and losses, and the mean curves with
// their 95% bands.
#pragma once
#include <string>
#include <vector>

#include "xiong/outcomes.h"
#include "xiong/report.h"
#include "xiong/verdict.h"
#include "xiong/training.h"

namespace normlab::xiong {

enum class Task { Copy, Text };  // the copy task (grids.copy_config) or the text task (grids.text_config)
const std::string& config_of(const Grids& g, Task task);
std::string task_name(Task task);  // "copy" | "text"

// An arm of the primary design (decay_start from the base config: the longest warmup).
TrainPoint e3_arm(const std::string& placement, const std::string& lr, int64_t warmup,
                  const std::string& optimizer = "adam");
// fairseq's literal schedule: inverse_sqrt from the end of warmup (decay_start 0).
TrainPoint literal_arm(const std::string& placement, const std::string& lr);
// Section 4's Pre-LN arm: no warmup, lr_max to `drop`, then x0.1 and the inverse-sqrt decay.
TrainPoint section4_arm(const std::string& lr, int64_t drop);

// The seeds an arm runs: on the copy task E3c's arms (Pre-LN none, Post-LN long, Adam, primary
// design, at the grid's lrs) run equivalence_seeds, every other arm `seeds`; on the text task every
// arm runs text_seeds. `common_seeds` pairs two arms.
std::vector<int> seeds_of(const Grids& g, Task task, const TrainPoint& arm);
std::vector<int> common_seeds(const Grids& g, Task task, const TrainPoint& a, const TrainPoint& b);

double final_capped(const RunOutcome& r);
// A paired difference of capped final validation losses, a minus b, over their common seeds.
Interval final_difference(const Grids& g, Task task, const TrainingResults& runs, const TrainPoint& a,
                          const TrainPoint& b);

// "Post-LN, warmup 400, lr_max to t = 400, then ..." for the verdicts' schedule field.
std::string arm_words(const Context& ctx, Task task, const TrainPoint& arm);

// One row per arm: placement, optimizer, lr_max, warmup, schedule in words, cumulative learning
// rate, validation loss at 25/50/100% of the run, runs that reached `target` (k/n), learned and
// diverged counts (the suite's one divergence rule).
std::string arm_table(const Context& ctx, Task task, const TrainingResults& runs,
                      const std::vector<TrainPoint>& arms, const Baseline& base, double target);

// Mean validation curves over seeds with a 95% t band, x from 0, chance as a dashed line.
std::string curves_figure(const Context& ctx, Task task, const TrainingResults& runs, const std::vector<TrainPoint>& arms,
                          const Baseline& base, const std::string& stem, const std::string& title);

// A copy-task claim on the paired final-loss difference a - b (e3_warmup.cpp): decided in the
// predicted direction from null_value, except that when neither arm learned (no run below the
// baseline's learn_below) it is inconclusive, its note saying so.
Verdict difference_verdict(const Context& ctx, std::string id, std::string claim, std::string paper,
                           std::string quantity, const TrainingResults& runs, const TrainPoint& a,
                           const TrainPoint& b, int64_t steps, double null_value, Side side);

// Time to a quality (e3_time.cpp): E3d on the copy task.
void append_time_to_quality(const Context& ctx, const TrainingResults& copy, Section& s);
// When did a run first reach `target` (censored at its length when it never did, or diverged first).
TimeToEvent time_to(const RunOutcome& r, double target);
// Kaplan-Meier table rows and the E3d-style verdict of `fast` against `slow` for one target.
Verdict time_verdict(const Context& ctx, Task task, const TrainingResults& runs, const TrainPoint& fast,
                     const TrainPoint& slow, double target, const std::string& id, std::string& table_md);

// Every claim of E3 with the arms its verdict reads (without seeds): `--only E3a` trains just these.
struct ClaimArms {
  std::string id;  // "E3a@1e-3", "E3d@1e-3.to0.5", "E3a.text@5e-4"
  Task task;
  std::vector<TrainPoint> arms;
};
std::vector<ClaimArms> e3_claims(const Grids& g);

// The text task (e3_text.cpp): its grid and its part of the E3 section.
std::vector<TrainPoint> e3_text_arms(const Grids& g);
void append_e3_text(const Context& ctx, const TrainingResults& text, Section& s);

}  // namespace normlab::xiong
