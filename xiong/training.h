// The suite's training runs: one sweep (sweep/sweep.h) per base config, every point a
// TrainPoint, and the results read back from each run directory (summary.json, metrics.jsonl).
#pragma once
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "config/run_status.h"
#include "xiong/grids.h"
#include "xiong/report.h"

namespace normlab::xiong {

struct RunOutcome {
  TrainPoint point;
  std::string run_dir;
  RunStatus status = RunStatus::Missing;  // completed | diverged | failed | missing
  int64_t diverged_step = -1;
  int64_t skipped_steps = 0;       // fp16: updates skipped for overflowing gradients
  int64_t steps = 0;               // the run's configured length
  double initial_loss = NAN;       // train loss of step 0 (the model at init)
  double final_val = NAN, best_val = NAN, wall_s = NAN;
  double bleu = NAN;               // encoder-decoder runs with log.bleu_pairs: the final greedy corpus BLEU
  std::vector<std::pair<double, double>> train_curve, val_curve;  // (step, loss)

  bool ok() const { return status == RunStatus::Completed && std::isfinite(final_val); }
  // Wortsman et al.'s capped loss: the final validation loss, but no worse than the loss at init;
  // a diverged run counts as the loss at init.
  double capped_final() const;
  // The first evaluated step whose validation loss is <= target (-1: never).
  int64_t first_step_at_or_below(double target) const;
  // The validation loss evaluated at (or last before) step fraction * steps; the capped loss at
  // init when the run diverged before it; NaN when nothing was evaluated by then.
  double val_at_fraction(double fraction) const;
};

class TrainingResults {
 public:
  void add(RunOutcome outcome);
  const RunOutcome* find(const TrainPoint& point) const;  // null if not trained
  // The outcomes of `point` for each seed (missing ones skipped).
  std::vector<const RunOutcome*> over_seeds(TrainPoint point, const std::vector<int>& seeds) const;
  // measure(run) for each seed, in the order of `seeds` (NaN where the run is missing or failed),
  // so that two arms' vectors pair up by seed.
  std::vector<double> per_seed(TrainPoint point, const std::vector<int>& seeds,
                               const std::function<double(const RunOutcome&)>& measure) const;
  size_t size() const { return runs_.size(); }
  // The suite's one definition of divergence, applied to every run: diverged if the trainer stopped
  // it (a non-finite loss) or if a training or validation loss after step `after_step` exceeds
  // `loss_limit` (1.5 ln V, Baseline::diverge_above). Such a run gets status "diverged" at the first
  // such step, so every table and verdict counts it the same way.
  void apply_divergence_rule(double loss_limit, int64_t after_step);
  double total_wall_s() const;

 private:
  std::map<std::string, RunOutcome> runs_;
};

// Trains the points (duplicates dropped; completed runs skipped, so an interrupted suite resumes)
// as one sweep of ctx.config_path(config_file) under ctx.out_dir / sweep_dir. With ctx.record_dir
// set, the runs that record holds (task column = sweep_dir, fingerprint equal to the point's) are
// taken from it; the others are trained only with ctx.train_absent.
TrainingResults run_training(const Context& ctx, const std::string& config_file, std::vector<TrainPoint> points,
                             const std::string& sweep_dir);

// Reads the points' runs from ctx.out_dir / sweep_dir without training anything (the registered
// analysis, while or after run_training trains them): a run counts when its fingerprint.txt equals
// that of the point's config from ctx.config_path(config_file); otherwise, or without summary.json,
// it is missing.
TrainingResults read_training(const Context& ctx, const std::string& config_file, const std::vector<TrainPoint>& points,
                              const std::string& sweep_dir);

// Mean over runs of curves sampled at the same steps (the shortest curve's steps are kept).
std::vector<std::pair<double, double>> mean_curve(const std::vector<const RunOutcome*>& runs, bool validation);

// The mean validation curve over runs with its 95% t band, at the steps of the longest curve: a
// run that diverged counts as its loss at init after it stopped (as in every table).
struct BandCurve {
  std::vector<std::pair<double, double>> mean;  // (step, mean loss)
  std::vector<std::pair<double, double>> band;  // (low, high) per step
};
BandCurve mean_validation_band(const std::vector<const RunOutcome*>& runs);

}  // namespace normlab::xiong
