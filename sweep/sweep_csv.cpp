// sweep.csv: one row per sweep point, RFC 4180 quoting (point names hold commas; io/csv.h).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/csv.h"
#include "sweep/sweep.h"

namespace fs = std::filesystem;

namespace normlab {

namespace {

// The columns after the axis keys.
const std::vector<std::string>& result_columns() {
  static const std::vector<std::string> columns = {"status",         "diverged_step", "final_train_loss",
                                                   "final_val_loss", "best_val_loss", "wall_s",
                                                   "run_dir",        "fingerprint",   "error"};
  return columns;
}

double parse_number(const std::string& cell, const std::string& where) {
  if (cell.empty()) return 0.0;  // not measured (pending or failed runs)
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  NL_CHECK(end != cell.c_str() && *end == '\0', "sweep", "{}: '{}' is not a number", where, cell);
  return v;
}

int64_t parse_step(const std::string& cell, const std::string& where) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(cell.c_str(), &end, 10);
  NL_CHECK(end != cell.c_str() && *end == '\0' && errno == 0 && v >= 0, "sweep",
           "{}: diverged_step '{}' is not a step number", where, cell);
  return v;
}

}  // namespace

// Points may set different keys (a grid plus extra arms): the columns are every key any point sets,
// in order of first appearance, and a point that does not set a key has an empty cell there.
void write_sweep_csv(const fs::path& path, const std::vector<SweepRow>& rows) {
  std::vector<std::string> keys;
  for (const SweepRow& row : rows)
    for (const auto& [key, _] : row.point.overrides)
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  std::vector<std::string> header = {"name"};
  header.insert(header.end(), keys.begin(), keys.end());
  header.insert(header.end(), result_columns().begin(), result_columns().end());
  std::string text;
  text += csv_line(header);
  for (const SweepRow& row : rows) {
    const bool measured = has_result(row.status);
    std::vector<std::string> cells = {row.point.name};
    for (const std::string& key : keys) {
      const auto& o = row.point.overrides;
      const auto it = std::find_if(o.begin(), o.end(), [&](const auto& kv) { return kv.first == key; });
      cells.push_back(it == o.end() ? "" : it->second);
    }
    cells.push_back(enum_name(row.status));
    cells.push_back(row.status == RunStatus::Diverged ? fmt::format("{}", row.diverged_step) : "");
    for (const double v : {row.final_train_loss, row.final_val_loss, row.best_val_loss, row.wall_seconds})
      cells.push_back(measured ? csv_number(v) : "");
    cells.push_back(row.run_dir);
    cells.push_back(row.fingerprint);
    cells.push_back(row.error);
    text += csv_line(cells);
  }
  write_file_atomic(path.string(), text);
}

std::vector<SweepRow> read_sweep_csv(const fs::path& path) {
  std::ifstream in(path);
  NL_CHECK(in.good(), "sweep", "cannot read '{}'", path.string());
  std::vector<std::string> header, cells;
  std::string line;
  NL_CHECK(std::getline(in, line) && split_csv_line(line, header), "sweep", "{}:1: no header", path.string());
  const size_t axes = header.size() >= 1 + result_columns().size()
                          ? header.size() - 1 - result_columns().size() : 0;
  const bool layout_ok = header.size() >= 1 + result_columns().size() && header[0] == "name" &&
                         std::equal(result_columns().begin(), result_columns().end(), header.begin() + 1 + axes);
  NL_CHECK(layout_ok, "sweep", "{}:1: expected the columns name, <axis keys>, {}", path.string(),
           fmt::join(result_columns(), ", "));
  std::vector<SweepRow> rows;
  for (size_t number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const std::string where = fmt::format("{}:{}", path.string(), number);
    NL_CHECK(split_csv_line(line, cells), "sweep", "{}: unterminated quoted cell", where);
    NL_CHECK(cells.size() == header.size(), "sweep", "{}: {} cells, the header has {}", where, cells.size(),
             header.size());
    SweepRow row;
    row.point.name = cells[0];
    for (size_t a = 0; a < axes; ++a)  // an empty cell: this point does not set that key
      if (!cells[1 + a].empty()) row.point.overrides.emplace_back(header[1 + a], cells[1 + a]);
    const size_t r = 1 + axes;
    const std::optional<RunStatus> status = parse_enum<RunStatus>(cells[r]);
    NL_CHECK(status.has_value(), "sweep", "{}: status '{}' is not one of {}", where, cells[r],
             fmt::join(enum_names<RunStatus>(), ", "));
    row.status = *status;
    row.diverged_step = cells[r + 1].empty() ? -1 : parse_step(cells[r + 1], where);
    row.final_train_loss = parse_number(cells[r + 2], where);
    row.final_val_loss = parse_number(cells[r + 3], where);
    row.best_val_loss = parse_number(cells[r + 4], where);
    row.wall_seconds = parse_number(cells[r + 5], where);
    row.run_dir = cells[r + 6];
    row.fingerprint = cells[r + 7];
    row.error = cells[r + 8];
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace normlab
