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

namespace fs = std::filesystem;

namespace normlab::xiong {

namespace {

// One CSV of the record: its rows as cells, each cell found by its column's name.
class RecordTable {
 public:
  RecordTable(const fs::path& path, const std::vector<std::string>& required) : path_(path.string()) {
    std::ifstream in(path);
    NL_CHECK(in.good(), "record", "{}: cannot open it (scripts/export_val_curves.py writes it)", path_);
    std::string line;
    NL_CHECK(std::getline(in, line) && split_csv_line(line, header_), "record", "{}:1: no header", path_);
    for (const std::string& name : required)
      NL_CHECK(column(name) >= 0, "record", "{}:1: no column '{}'", path_, name);
    for (int number = 2; std::getline(in, line); ++number) {
      std::vector<std::string> cells;
      if (line.empty()) continue;
      NL_CHECK(split_csv_line(line, cells) && cells.size() == header_.size(), "record",
               "{}:{}: {} cells where the header has {}", path_, number, cells.size(), header_.size());
      rows_.push_back({number, std::move(cells)});
    }
  }
  int column(const std::string& name) const {
    for (size_t i = 0; i < header_.size(); ++i)
      if (header_[i] == name) return static_cast<int>(i);
    return -1;
  }
  size_t size() const { return rows_.size(); }
  std::string text(size_t row, const std::string& name) const { return rows_[row].cells[column(name)]; }
  bool has(size_t row, const std::string& name) const { return column(name) >= 0 && !text(row, name).empty(); }
  // A number ("nan" reads as NaN); anything else is an error naming the file, line and column.
  double number(size_t row, const std::string& name) const {
    const std::string cell = text(row, name);
    if (cell == "nan" || cell == "NaN") return NAN;
    double value = 0;
    const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
    NL_CHECK(ec == std::errc() && end == cell.data() + cell.size(), "record", "{}:{}: column '{}' holds '{}', not a number",
             path_, rows_[row].line, name, cell);
    return value;
  }
  int line(size_t row) const { return rows_[row].line; }
  const std::string& path() const { return path_; }

 private:
  struct Row {
    int line;
    std::vector<std::string> cells;
  };
  std::string path_;
  std::vector<std::string> header_;
  std::vector<Row> rows_;
};

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
    r.steps = static_cast<int64_t>(runs.number(i, "steps_done"));
    r.final_val = runs.number(i, "final_val_loss");
    if (runs.has(i, "initial_loss")) r.initial_loss = runs.number(i, "initial_loss");
    if (runs.has(i, "diverged_at_step")) r.diverged_step = static_cast<int64_t>(runs.number(i, "diverged_at_step"));
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
    const double step = curves.number(i, "step");
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
