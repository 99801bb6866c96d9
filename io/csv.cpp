#include "io/csv.h"

#include <cmath>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "core/error.h"

namespace fs = std::filesystem;

namespace normlab {

std::string csv_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return fmt::format("{}", value);  // the shortest text that reads back exactly
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string line;
  for (size_t c = 0; c < cells.size(); ++c) {
    if (c > 0) line += ',';
    std::string cell;
    for (const char ch : cells[c]) cell += (ch == '\n' || ch == '\r') ? ' ' : ch;
    if (cell.find_first_of(",\"") == std::string::npos) {
      line += cell;
      continue;
    }
    line += '"';
    for (const char ch : cell) line += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    line += '"';
  }
  return line + '\n';
}

bool split_csv_line(const std::string& line, std::vector<std::string>& cells) {
  cells.clear();
  if (line.empty()) return true;
  cells.emplace_back();
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        cells.back() += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      cells.emplace_back();
    } else if (ch != '\r') {
      cells.back() += ch;
    }
  }
  return !quoted;
}

int CsvTable::column(const std::string& name) const {
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return static_cast<int>(i);
  return -1;
}

CsvTable read_csv(const fs::path& path) {
  NL_CHECK(fs::exists(path), "csv", "'{}' does not exist", path.string());
  std::ifstream in(path);
  CsvTable table;
  std::string line;
  NL_CHECK(std::getline(in, line) && split_csv_line(line, table.columns) && !table.columns.empty(), "csv",
           "'{}' is empty (no header)", path.string());
  std::vector<std::string> cells;
  for (size_t number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    NL_CHECK(split_csv_line(line, cells), "csv", "{}:{}: unterminated quoted cell", path.string(), number);
    NL_CHECK(cells.size() == table.columns.size(), "csv", "{}:{}: {} cells, the header has {}", path.string(),
             number, cells.size(), table.columns.size());
    std::vector<double> row;
    for (const std::string& cell : cells) {
      char* end = nullptr;
      const double v = std::strtod(cell.c_str(), &end);
      row.push_back(end == cell.c_str() ? std::nan("") : v);
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace normlab
