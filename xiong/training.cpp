#include "xiong/training.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "config/config.h"
#include "train/run_dir.h"
#include "xiong/arms.h"
#include "xiong/run_record.h"
#include "sweep/sweep.h"
#include "xiong/verdict.h"

namespace fs = std::filesystem;

namespace normlab::xiong {

namespace {

double number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : NAN;
}

// A summary's integer or string (a hand-edited or damaged summary.json gives the fallback, not a
// JSON type error).
int64_t integer(const nlohmann::json& j, const char* key, int64_t fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}
std::string text(const nlohmann::json& j, const char* key, const std::string& fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// Reads summary.json and metrics.jsonl of a run directory into `out`.
void read_run(RunOutcome& out) {
  const fs::path dir = out.run_dir;
  std::ifstream in(dir / run_files::kSummary);
  if (!in) return;
  const nlohmann::json summary = nlohmann::json::parse(in, nullptr, false);
  if (!summary.is_object()) return;
  out.status = parse_enum<RunStatus>(text(summary, "status", "missing")).value_or(RunStatus::Missing);
  out.final_val = number(summary, "final_val_loss");
  out.best_val = number(summary, "best_val_loss");
  out.wall_s = number(summary, "wall_s");
  out.bleu = number(summary, "bleu");
  out.steps = integer(summary, "steps", 0);
  out.skipped_steps = integer(summary, "skipped_steps", 0);
  if (out.status == RunStatus::Diverged) out.diverged_step = integer(summary, "diverged_at_step", -1);
  if (!fs::exists(dir / run_files::kMetrics)) return;
  for (const nlohmann::json& r : read_metrics(dir / run_files::kMetrics)) {
    const double step = number(r, kStepKey);
    const double train = number(r, kTrainLossKey), val = number(r, kValLossKey);
    // Row s is update s: its train loss was measured before it (row 1: at initialization), its
    // validation loss after it.
    if (std::isfinite(train)) out.train_curve.emplace_back(step, train);
    if (std::isfinite(val)) out.val_curve.emplace_back(step, val);
    if (step == 1 && std::isfinite(train)) out.initial_loss = train;
  }
}

}  // namespace

double RunOutcome::capped_final() const {
  if (status == RunStatus::Diverged || !std::isfinite(final_val)) return initial_loss;
  return std::isfinite(initial_loss) ? std::min(final_val, initial_loss) : final_val;
}

int64_t RunOutcome::first_step_at_or_below(double target) const {
  for (const auto& [step, loss] : val_curve)
    if (loss <= target) return static_cast<int64_t>(step);
  return -1;
}

double RunOutcome::val_at_fraction(double fraction) const {
  const double step = fraction * static_cast<double>(steps);
  if (status == RunStatus::Diverged && diverged_step >= 0 && static_cast<double>(diverged_step) <= step) return capped_final();
  double value = NAN;
  for (const auto& [s, loss] : val_curve)
    if (s <= step + 0.5) value = std::isfinite(initial_loss) ? std::min(loss, initial_loss) : loss;
  return value;
}

void TrainingResults::add(RunOutcome outcome) {
  const std::string name = outcome.point.name();
  runs_[name] = std::move(outcome);
}

const RunOutcome* TrainingResults::find(const TrainPoint& point) const {
  const auto it = runs_.find(point.name());
  return it == runs_.end() ? nullptr : &it->second;
}

std::vector<const RunOutcome*> TrainingResults::over_seeds(TrainPoint point, const std::vector<int>& seeds) const {
  std::vector<const RunOutcome*> out;
  for (const int s : seeds) {
    point.seed = s;
    if (const RunOutcome* r = find(point); r && has_result(r->status)) out.push_back(r);
  }
  return out;
}

std::vector<double> TrainingResults::per_seed(TrainPoint point, const std::vector<int>& seeds,
                                              const std::function<double(const RunOutcome&)>& measure) const {
  std::vector<double> out;
  for (const int s : seeds) {
    point.seed = s;
    const RunOutcome* r = find(point);
    out.push_back(r && has_result(r->status) ? measure(*r) : NAN);
  }
  return out;
}

void TrainingResults::apply_divergence_rule(double loss_limit, int64_t after_step) {
  for (auto& [_, r] : runs_) {
    if (r.status != RunStatus::Completed) continue;
    int64_t first = -1;
    for (const auto* curve : {&r.train_curve, &r.val_curve})
      for (const auto& [step, loss] : *curve)
        if (step > static_cast<double>(after_step) && (!std::isfinite(loss) || loss > loss_limit) &&
            (first < 0 || static_cast<int64_t>(step) < first))
          first = static_cast<int64_t>(step);
    if (first < 0 && std::isfinite(r.final_val)) continue;
    r.status = RunStatus::Diverged;
    r.diverged_step = first >= 0 ? first : r.steps;
  }
}

double TrainingResults::total_wall_s() const {
  double total = 0;
  for (const auto& [_, r] : runs_)
    if (std::isfinite(r.wall_s)) total += r.wall_s;
  return total;
}

TrainingResults run_training(const Context& ctx, const std::string& config_file, std::vector<TrainPoint> points,
                             const std::string& sweep_dir) {
  std::vector<TrainPoint> unique;
  for (const TrainPoint& p : points)
    if (std::find(unique.begin(), unique.end(), p) == unique.end()) unique.push_back(p);
  TrainingResults results;
  if (unique.empty()) return results;
  if (!ctx.record_dir.empty()) {
    const std::string config_path = ctx.config_path(config_file);
    const TrainingResults recorded = read_training_record(ctx.record_dir, sweep_dir, unique, [&](const TrainPoint& p) {
      return config_fingerprint(point_config(config_path, p));
    });
    if (!ctx.train_absent) return recorded;
    std::vector<TrainPoint> absent;
    for (const TrainPoint& p : unique)
      if (const RunOutcome* r = recorded.find(p); r->status == RunStatus::Missing) absent.push_back(p);
      else results.add(*r);
    ctx.log(fmt::format("{} of {} runs of {} taken from the record in {}", unique.size() - absent.size(),
                        unique.size(), sweep_dir, ctx.record_dir.string()));
    unique = absent;
    if (unique.empty()) return results;
  }

  SweepOptions options;
  options.config_path = ctx.config_path(config_file);
  options.out_dir = (ctx.out_dir / sweep_dir).string();
  options.jobs = ctx.jobs;
  options.normlab_binary = ctx.normlab_binary;
  options.quiet = ctx.quiet;
  std::vector<SweepPoint> sweep_points;
  for (const TrainPoint& p : unique) sweep_points.push_back(p.sweep_point());
  ctx.log(fmt::format("training {} runs of {} in {} with {} job(s)", unique.size(), config_file,
                      options.out_dir, ctx.jobs));
  const std::vector<SweepRow> rows = run_sweep(options, sweep_points);
  for (size_t i = 0; i < unique.size() && i < rows.size(); ++i) {
    RunOutcome outcome;
    outcome.point = unique[i];
    outcome.run_dir = rows[i].run_dir;
    if (rows[i].status == RunStatus::Failed) {
      outcome.status = RunStatus::Failed;
    } else {
      read_run(outcome);
    }
    results.add(std::move(outcome));
  }
  return results;
}

TrainingResults read_training(const Context& ctx, const std::string& config_file, const std::vector<TrainPoint>& points,
                              const std::string& sweep_dir) {
  TrainingResults results;
  const std::string config_path = ctx.config_path(config_file);
  for (const TrainPoint& p : points) {
    if (results.find(p)) continue;
    RunOutcome outcome;
    outcome.point = p;
    outcome.run_dir = (ctx.out_dir / sweep_dir / p.sweep_point().name).string();
    std::ifstream in(fs::path(outcome.run_dir) / run_files::kFingerprint);
    std::string fingerprint;
    if (in >> fingerprint && fingerprint == config_fingerprint(point_config(config_path, p))) read_run(outcome);
    results.add(std::move(outcome));
  }
  return results;
}

std::vector<std::pair<double, double>> mean_curve(const std::vector<const RunOutcome*>& runs, bool validation) {
  std::vector<std::pair<double, double>> mean;
  if (runs.empty()) return mean;
  size_t length = SIZE_MAX;
  for (const RunOutcome* r : runs) length = std::min(length, (validation ? r->val_curve : r->train_curve).size());
  for (size_t i = 0; i < length; ++i) {
    double sum = 0;
    for (const RunOutcome* r : runs) sum += (validation ? r->val_curve : r->train_curve)[i].second;
    mean.emplace_back((validation ? runs[0]->val_curve : runs[0]->train_curve)[i].first,
                      sum / static_cast<double>(runs.size()));
  }
  return mean;
}

BandCurve mean_validation_band(const std::vector<const RunOutcome*>& runs) {
  BandCurve out;
  const RunOutcome* longest = nullptr;
  for (const RunOutcome* r : runs)
    if (!longest || r->val_curve.size() > longest->val_curve.size()) longest = r;
  if (!longest) return out;
  for (size_t i = 0; i < longest->val_curve.size(); ++i) {
    const double step = longest->val_curve[i].first;
    std::vector<double> values;
    for (const RunOutcome* r : runs) {
      if (i < r->val_curve.size() && r->val_curve[i].first == step && !(r->status == RunStatus::Diverged && r->diverged_step >= 0 && step > static_cast<double>(r->diverged_step)))
        values.push_back(std::isfinite(r->initial_loss) ? std::min(r->val_curve[i].second, r->initial_loss)
                                                        : r->val_curve[i].second);
      else if (r->status == RunStatus::Diverged)
        values.push_back(r->capped_final());
    }
    const Interval m = mean_interval(values);
    out.mean.emplace_back(step, m.estimate);
    out.band.emplace_back(m.low, m.high);
  }
  return out;
}

}  // namespace normlab::xiong
