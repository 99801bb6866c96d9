#include "train/run_dir.h"
#include "config/run_status.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "core/error.h"
#include "core/files.h"
#include "io/atomic_file.h"

namespace fs = std::filesystem;

namespace normlab {
namespace {

std::vector<std::string> read_lines(const fs::path& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::ofstream open_for_append(const fs::path& path, bool fresh) {
  std::ofstream out(path, fresh ? std::ios::trunc : std::ios::app);
  NL_CHECK(out.good(), "run_dir", "cannot open '{}' for writing", path.string());
  return out;
}

}  // namespace

namespace {

// The names in dir other than the lock file, sorted.
std::vector<std::string> entries_besides_lock(const fs::path& dir) {
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir))
    if (entry.path().filename() != kLockFile) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A directory normlab has written: it holds the lock file (every run since locks exist), or a
// config.toml that config_to_toml wrote (older runs).
bool written_by_normlab(const fs::path& dir) {
  if (fs::exists(dir / kLockFile)) return true;
  std::ifstream in(dir / run_files::kConfig);
  std::string first;
  return std::getline(in, first) && first.rfind("# normlab run configuration", 0) == 0;
}

std::string list_some(const std::vector<std::string>& names) {
  const size_t shown = std::min<size_t>(names.size(), 4);
  return fmt::format("{}{}", fmt::join(names.begin(), names.begin() + static_cast<long>(shown), ", "),
                     names.size() > shown ? ", ..." : "");
}

// Empties a run directory, lock file aside. The summary goes first and config.toml next, so that
// a kill half way leaves neither a "completed" run nor one that --resume would continue.
void remove_run_contents(const fs::path& dir) {
  std::vector<std::string> names = entries_besides_lock(dir);
  const auto rank = [](const std::string& n) { return n == run_files::kSummary ? 0 : n == run_files::kConfig ? 1 : 2; };
  std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
  for (const std::string& name : names) {
    std::error_code error;
    fs::remove_all(dir / name, error);  // a symbolic link is removed, not followed
    NL_CHECK(!error, "run_dir", "--overwrite: cannot remove '{}': {}", (dir / name).string(), error.message());
  }
}

// The checks of a fresh or overwriting run on an existing directory, before it is locked.
void check_before_locking(const fs::path& dir, RunDirMode mode) {
  const std::vector<std::string> names = entries_besides_lock(dir);
  if (names.empty() || written_by_normlab(dir)) return;
  fail("run_dir", "'{}' is not empty ({}) and is not a normlab run directory; choose another train.name "
       "or train.out_dir{}", dir.string(), list_some(names),
       mode == RunDirMode::overwrite ? " (--overwrite only empties directories that normlab wrote)" : "");
}

}  // namespace

RunDir prepare_run_dir(const std::string& out_dir, const std::string& name, RunDirMode mode) {
  const fs::path dir = fs::path(out_dir) / name;
  if (mode == RunDirMode::resume) {
    NL_CHECK(fs::is_directory(dir), "run_dir", "cannot resume: '{}' does not exist", dir.string());
    return {dir, DirectoryLock(dir, "run_dir")};
  }
  std::error_code error;
  fs::create_directories(dir, error);
  NL_CHECK(!error && fs::is_directory(dir), "run_dir", "cannot create '{}': {}", dir.string(),
           error.message());
  check_before_locking(dir, mode);
  RunDir run{dir, DirectoryLock(dir, "run_dir")};
  const std::vector<std::string> names = entries_besides_lock(dir);
  if (names.empty()) return run;
  if (mode == RunDirMode::overwrite) {
    remove_run_contents(dir);
    return run;
  }
  NL_CHECK(!is_completed_run(dir), "run_dir",
           "'{}' already holds a completed run ({} exists); choose another train.name, or start it over "
           "with --overwrite", dir.string(), run_files::kSummary);
  fail("run_dir", "'{}' already holds an unfinished run ({}); continue it with `normlab train --resume {}` (from "
       "its last checkpoint, or from step 0 if it has none), start it over with --overwrite, or choose another "
       "train.name", dir.string(), list_some(names), dir.string());
}

void remove_training_outputs(const fs::path& run_dir) {
  std::error_code error;
  fs::remove(run_dir / run_files::kSummary, error);  // first: a kill half way leaves no finished run
  NL_CHECK(!error, "run_dir", "cannot remove '{}': {}", (run_dir / run_files::kSummary).string(), error.message());
  for (const std::string& name : entries_besides_lock(run_dir)) {
    if (name == run_files::kConfig || name == run_files::kFingerprint || name == run_files::kTokenizer ||
        name == run_files::kTokenizerModel || name == run_files::kProvenance)
      continue;
    fs::remove_all(run_dir / name, error);  // a symbolic link is removed, not followed
    NL_CHECK(!error, "run_dir", "cannot remove '{}': {}", (run_dir / name).string(), error.message());
  }
}

bool is_completed_run(const fs::path& run_dir) {
  const fs::path summary = run_dir / run_files::kSummary;
  if (!fs::exists(summary)) return false;
  std::ifstream in(summary);
  const nlohmann::json json = nlohmann::json::parse(in, nullptr, false);
  if (!json.is_object() || !json.contains("status") || !json["status"].is_string()) return true;
  const std::optional<RunStatus> status = parse_enum<RunStatus>(json["status"].get<std::string>());
  return !(status && is_resumable(*status));
}

MetricsWriter::MetricsWriter(const fs::path& path, std::optional<int64_t> keep_through_step)
    : path_(path) {
  if (keep_through_step && fs::exists(path)) {
    std::string kept;
    for (const std::string& line : read_lines(path)) {
      // A line that does not parse (cut short by a crash) or has no step is dropped.
      nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
      if (record.is_discarded() || !record.is_object() || !record.contains(kStepKey) ||
          !record[kStepKey].is_number_integer())
        continue;
      if (record[kStepKey].get<int64_t>() <= *keep_through_step) kept += line + "\n";
    }
    write_file_atomic(path.string(), kept);
  }
  out_ = open_for_append(path, !keep_through_step.has_value());
}

void MetricsWriter::write(const nlohmann::json& record) {
  out_ << record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  out_.flush();
  NL_CHECK(out_.good(), "metrics", "writing '{}' failed", path_.string());
}

namespace {

std::string layer_column(const LayerKey& key) {
  static const std::array<const char*, 3> stacks = {"", "encoder.", "decoder."};
  return fmt::format("{}layer.{}", stacks[static_cast<size_t>(key.first)], key.second);
}

}  // namespace

std::string block_prefix(const LayerKey& key) {
  static const std::array<const char*, 3> stacks = {"blocks.", "encoder.", "decoder."};
  return fmt::format("{}{}.", stacks[static_cast<size_t>(key.first)], key.second);
}

std::string layer_column_of(const std::optional<LayerKey>& key) { return key ? layer_column(*key) : std::string(); }

std::vector<std::string> grad_norm_columns(const std::vector<ParamGradNorm>& norms,
                                           const std::vector<std::string>& extra_names) {
  std::vector<std::string> columns = {"step"};
  std::map<LayerKey, bool> layers;  // sorted by stack, then layer index
  for (const ParamGradNorm& p : norms) {
    columns.push_back(p.name);
    if (p.layer) layers[*p.layer] = true;
  }
  for (const auto& [key, _] : layers) columns.push_back(layer_column(key));
  columns.push_back("global");
  columns.insert(columns.end(), extra_names.begin(), extra_names.end());
  return columns;
}

std::vector<double> grad_norm_values(const std::vector<ParamGradNorm>& norms,
                                     const std::vector<std::pair<std::string, double>>& extra) {
  // layer.N = sqrt(sum over params p in block N of ||g_p||^2); global the same over all params.
  std::vector<double> values;
  std::map<LayerKey, double> layer_squares;
  double global_squares = 0.0;
  for (const ParamGradNorm& p : norms) {
    values.push_back(p.norm);
    if (p.layer) layer_squares[*p.layer] += p.norm * p.norm;
    global_squares += p.norm * p.norm;
  }
  for (const auto& [layer, squares] : layer_squares) values.push_back(std::sqrt(squares));
  values.push_back(std::sqrt(global_squares));
  for (const auto& [name, value] : extra) values.push_back(value);
  return values;
}

StepCsvWriter::StepCsvWriter(const fs::path& path, std::string what, std::optional<int64_t> keep_through_step)
    : path_(path), what_(std::move(what)) {
  if (keep_through_step && fs::exists(path)) {
    std::vector<std::string> lines = read_lines(path);
    std::string kept;
    if (!lines.empty()) {
      split_csv_line(lines[0], header_);
      kept = lines[0] + "\n";
    }
    std::vector<std::string> cells;
    for (size_t i = 1; i < lines.size(); ++i) {
      if (!split_csv_line(lines[i], cells) || cells.size() != header_.size()) continue;  // a row cut short by a crash
      char* end = nullptr;
      const long long step = std::strtoll(cells[0].c_str(), &end, 10);
      if (end != cells[0].c_str() && step <= *keep_through_step) kept += lines[i] + "\n";
    }
    write_file_atomic(path.string(), kept);
  }
  out_ = open_for_append(path, !keep_through_step.has_value());
}

void StepCsvWriter::write(int64_t step, const std::vector<std::string>& columns, const std::vector<double>& values) {
  NL_CHECK(columns.size() == values.size(), what_, "{} column names for {} values", columns.size(), values.size());
  std::vector<std::string> header = {"step"};
  for (const std::string& name : columns) {
    NL_CHECK(!name.empty() && name.find_first_of(",\"\n") == std::string::npos, what_,
             "'{}' cannot be a CSV column name", name);
    header.push_back(name);
  }
  if (header_.empty()) {
    header_ = header;
    out_ << csv_line(header);
  } else {
    NL_CHECK(header == header_, what_,
             "{}: the columns of step {} differ from the header ({} columns now, {} in the header): "
             "the parameter list must not change during a run", path_.string(), step, header.size(),
             header_.size());
  }
  std::vector<std::string> row = {fmt::format("{}", step)};
  for (const double value : values) row.push_back(csv_number(value));
  out_ << csv_line(row);
  out_.flush();
  NL_CHECK(out_.good(), what_, "writing '{}' failed", path_.string());
}

GradNormWriter::GradNormWriter(const fs::path& path, std::optional<int64_t> keep_through_step)
    : csv_(path, "grad_norms", keep_through_step) {}

std::vector<std::string> GradNormWriter::write(int64_t step, const std::vector<ParamGradNorm>& norms,
                                               const std::vector<std::pair<std::string, double>>& extra) {
  std::vector<std::string> extra_names;
  for (const auto& [name, value] : extra) extra_names.push_back(name);
  std::vector<std::string> columns = grad_norm_columns(norms, extra_names);
  columns.erase(columns.begin());  // "step": the writer's own first column
  csv_.write(step, columns, grad_norm_values(norms, extra));
  std::vector<std::string> zero;
  for (const ParamGradNorm& p : norms)
    if (p.norm == 0.0) zero.push_back(p.name);
  return zero;
}

std::vector<nlohmann::json> read_metrics(const fs::path& path) {
  NL_CHECK(fs::exists(path), "metrics", "'{}' does not exist", path.string());
  std::vector<nlohmann::json> records;
  const std::vector<std::string> lines = read_lines(path);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    nlohmann::json record = nlohmann::json::parse(lines[i], nullptr, false);
    const bool ok = !record.is_discarded() && record.is_object();
    if (!ok && i + 1 == lines.size()) break;  // the last line of a run that is still being written
    NL_CHECK(ok, "metrics", "{}:{}: not a JSON object", path.string(), i + 1);
    records.push_back(std::move(record));
  }
  return records;
}

namespace {

// A step table's cell in column `column` of line `number`: a whole number for "step", else a
// number or empty (NaN); anything else is an error.
double step_csv_cell(const std::string& cell, const fs::path& path, size_t number, const std::string& column) {
  if (cell.empty() && column != kStepKey) return std::nan("");
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  const bool whole = !cell.empty() && end == cell.c_str() + cell.size() && !std::isspace(static_cast<unsigned char>(cell[0]));
  const bool step = std::isfinite(v) && v == std::floor(v) && std::fabs(v) <= 9007199254740992.0;  // exact in a double
  NL_CHECK(whole && (column != kStepKey || step), "csv",
           "{}:{}: column '{}': '{}' is not {}", path.string(), number, column, cell,
           column == kStepKey ? "a whole number" : "a number");
  return v;
}

}  // namespace

CsvTable read_step_csv(const fs::path& path) {
  NL_CHECK(fs::exists(path), "csv", "'{}' does not exist", path.string());
  const std::string text = read_whole_file(path, "csv");
  CsvTable table;
  std::vector<std::string> cells;
  size_t start = 0;
  for (size_t number = 1;; ++number) {
    const size_t newline = text.find('\n', start);
    if (newline == std::string::npos) break;  // no line, or the last one cut short
    const std::string line = text.substr(start, newline - start);
    start = newline + 1;
    if (number == 1) {
      NL_CHECK(split_csv_line(line, table.columns) && !table.columns.empty() && table.columns[0] == kStepKey, "csv",
               "{}:1: the header must start with the column 'step'", path.string());
      for (size_t c = 1; c < table.columns.size(); ++c)
        NL_CHECK(std::find(table.columns.begin(), table.columns.begin() + c, table.columns[c]) ==
                     table.columns.begin() + c,
                 "csv", "{}:1: the column '{}' appears twice", path.string(), table.columns[c]);
      continue;
    }
    if (line.empty()) continue;
    NL_CHECK(split_csv_line(line, cells), "csv", "{}:{}: unterminated quoted cell", path.string(), number);
    NL_CHECK(cells.size() == table.columns.size(), "csv", "{}:{}: {} cells, the header has {}", path.string(),
             number, cells.size(), table.columns.size());
    std::vector<double> row;
    for (size_t c = 0; c < cells.size(); ++c) row.push_back(step_csv_cell(cells[c], path, number, table.columns[c]));
    table.rows.push_back(std::move(row));
  }
  NL_CHECK(!table.columns.empty(), "csv", "'{}' has no header line", path.string());
  return table;
}

void write_summary(const fs::path& run_dir, const nlohmann::json& summary) {
  write_file_atomic((run_dir / run_files::kSummary).string(),
                    summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace normlab
