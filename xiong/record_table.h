// RecordTable: one CSV of a study's committed record read back as cells, each found by its
// column's name; a missing column, a short row, a cell that is not a number, or not a whole number
// where one is read, is an error naming the file, the line and the column. Used by xiong/run_record.cpp (v4) and xiong/v5/analysis_v5.cpp.
#pragma once
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/csv.h"

namespace normlab::xiong {

// One CSV of the record: its rows as cells, each cell found by its column's name.
class RecordTable {
 public:
  RecordTable(const std::filesystem::path& path, const std::vector<std::string>& required) : path_(path.string()) {
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
  // A whole number within +-2^31 (a seed, a step, an epoch, a layer); anything else (a fraction,
  // NaN, 1e300, which a cast would turn into undefined behaviour) is an error naming the file,
  // line and column.
  int64_t integer(size_t row, const std::string& name) const {
    const double value = number(row, name);
    NL_CHECK(std::isfinite(value) && value == std::floor(value) && std::fabs(value) <= 2147483647.0, "record",
             "{}:{}: column '{}' holds '{}', not a whole number within +-2^31", path_, rows_[row].line, name,
             text(row, name));
    return static_cast<int64_t>(value);
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

}  // namespace normlab::xiong
