#include "xiong/run_record.h"

#include <charconv>
#include <fstream>
#include <functional>
#include <map>

#include "core/error.h"
#include "core/files.h"
#include "io/atomic_file.h"
#include "core/named_enum.h"
#include "io/csv.h"
#include "xiong/record_table.h"

namespace fs = std::filesystem;

namespace normlab::xiong {

namespace {

using RunKey = std::pair<std::string, std::string>;  // (task, run directory name)

struct RecordedRun {
  RunOutcome outcome;
  std::string fingerprint;  // of the config it was made with; "" when the record has no such column
};

// The record's runs by (task, run), with their curves.
std::map<RunKey, RecordedRun> read_record(const fs::path& dir) {
  const RecordTable runs(dir / kRecordRuns, {"task", "run", "status", "steps_done", "final_val_loss"});
  const bool legacy = fs::exists(dir / kRecordLegacy);
  std::map<RunKey, RecordedRun> out;
  for (size_t i = 0; i < runs.size(); ++i) {
    RunOutcome r;
    const std::string status = runs.text(i, "status");
    const auto parsed = parse_enum<RunStatus>(status);
    NL_CHECK(parsed && (*parsed == RunStatus::Completed || *parsed == RunStatus::Diverged), "record",
             "{}:{}: status '{}' (a finished run is completed or diverged)", runs.path(), runs.line(i), status);
    r.status = *parsed;
    r.steps = runs.integer(i, "steps_done");
    r.final_val = runs.number(i, "final_val_loss");
    if (runs.has(i, "initial_loss")) r.initial_loss = runs.number(i, "initial_loss");
    if (runs.has(i, "diverged_at_step")) r.diverged_step = runs.integer(i, "diverged_at_step");
    NL_CHECK(r.status != RunStatus::Diverged || std::isfinite(r.initial_loss), "record",
             "{}:{}: run '{}' diverged but has no initial_loss, the loss it counts as", runs.path(), runs.line(i),
             runs.text(i, "run"));
    const std::string fingerprint = runs.has(i, "fingerprint") ? runs.text(i, "fingerprint") : "";
    NL_CHECK(legacy || !fingerprint.empty(), "record", "{}:{}: run '{}' has no fingerprint (of the config it was made "
             "with); a record whose rows cannot carry one says why in {}", runs.path(), runs.line(i),
             runs.text(i, "run"), (dir / kRecordLegacy).string());
    const bool added =
        out.emplace(RunKey{runs.text(i, "task"), runs.text(i, "run")}, RecordedRun{std::move(r), fingerprint}).second;
    NL_CHECK(added, "record", "{}:{}: run '{}' is listed twice", runs.path(), runs.line(i), runs.text(i, "run"));
  }
  const RecordTable curves(dir / kRecordCurves, {"task", "run", "step", "val_loss"});
  for (size_t i = 0; i < curves.size(); ++i) {
    auto it = out.find({curves.text(i, "task"), curves.text(i, "run")});
    NL_CHECK(it != out.end(), "record", "{}:{}: run '{}' is not in {}", curves.path(), curves.line(i),
             curves.text(i, "run"), kRecordRuns);
    auto& curve = it->second.outcome.val_curve;
    const double step = static_cast<double>(curves.integer(i, "step"));
    NL_CHECK(curve.empty() || step > curve.back().first, "record", "{}:{}: step {} after step {}: rows out of order",
             curves.path(), curves.line(i), step, curve.empty() ? 0.0 : curve.back().first);
    curve.emplace_back(step, curves.number(i, "val_loss"));
  }
  return out;
}

TrainingResults task_results(const std::map<RunKey, RecordedRun>& record, const std::string& task,
                             const std::vector<TrainPoint>& points, const fs::path& dir,
                             const std::function<std::string(const TrainPoint&)>& fingerprint_of) {
  TrainingResults results;
  for (const TrainPoint& p : points) {
    if (results.find(p)) continue;
    const std::string name = p.sweep_point().name;
    RunOutcome outcome;
    if (auto it = record.find({task, name}); it != record.end())
      if (it->second.fingerprint.empty() || !fingerprint_of || it->second.fingerprint == fingerprint_of(p))
        outcome = it->second.outcome;
    outcome.point = p;
    outcome.run_dir = (dir / kRecordRuns).string() + ": " + task + "/" + name;
    results.add(std::move(outcome));
  }
  return results;
}

}  // namespace

TrainingResults read_training_record(const fs::path& record_dir, const std::string& task,
                                     const std::vector<TrainPoint>& points,
                                     const std::function<std::string(const TrainPoint&)>& fingerprint_of) {
  return task_results(read_record(record_dir), task, points, record_dir, fingerprint_of);
}

ConfirmatoryRuns read_confirmatory_record(const Context& ctx, const Registration& reg, const fs::path& record_dir) {
  const fs::path probes = record_dir / kRecordInitProbes, cache = ctx.out_dir / "cache" / "v4_init_probes.json";
  if (fs::exists(probes)) {
    fs::create_directories(cache.parent_path());
    write_file_atomic(cache.string(), read_whole_file(probes, "record"));  // a kill leaves no half file
  }
  const std::map<RunKey, RecordedRun> record = read_record(record_dir);
  auto all = [](const std::string&) { return true; };
  ConfirmatoryRuns out;
  out.copy = task_results(record, "copy", task_runs(reg, "copy", all), record_dir, {});
  out.text = task_results(record, "text", task_runs(reg, "text", all), record_dir, {});
  out.source = "the record in " + record_dir.string() + " (" + kRecordCurves + ", " + kRecordRuns + ")";
  apply_divergence_rules(ctx, out);
  return out;
}

}  // namespace normlab::xiong
