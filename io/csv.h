// CSV as normlab writes and reads it (grad_norms.csv, sweep.csv): comma-separated, one line a row,
// RFC 4180 quoting only for a cell that needs it (one holding a comma or a double quote), numbers
// in the shortest text that reads back exactly, NaN and the infinities as nan, inf and -inf.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace normlab {

std::string csv_number(double value);
// One row, newline included; a line break inside a cell becomes a space (one line a row).
std::string csv_line(const std::vector<std::string>& cells);
// The cells of one line (an empty line has none); false if a quoted cell is not closed.
bool split_csv_line(const std::string& line, std::vector<std::string>& cells);

// A numeric table read back (for plots and tests).
struct CsvTable {
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;  // NaN for empty or unreadable cells
  int column(const std::string& name) const;  // -1 if absent
};
CsvTable read_csv(const std::filesystem::path& path);  // throws naming the file and line

}  // namespace normlab
