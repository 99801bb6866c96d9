// libFuzzer target: the readers of a run's own files as the plots, resume and Python take them
// (train/run_dir.h, train/trainer_files.h), on arbitrary bytes:
//   input = <selector byte> <file text>
//   selector % 3 == 0: grad_norms.csv / dynamics.csv (read_step_csv); a table that reads, with
//                      rows and writable column names, is written back with StepCsvWriter and
//                      must read to the same table (NaN equal to NaN);
//   selector % 3 == 1: metrics.jsonl (read_metrics);
//   selector % 3 == 2: summary.json beside a valid config.toml (training::finished_result: --resume of a
//                      finished run).
// Every input must end in a result or a normlab::Error.
#include <cmath>
#include <filesystem>
#include <string>

#include "config/config.h"
#include "core/error.h"
#include "fuzz_util.h"
#include "train/run_dir.h"
#include "train/trainer_files.h"

namespace {

using namespace normlab;
namespace fs = std::filesystem;

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

bool writable(const std::string& name) {
  return !name.empty() && name.find_first_of(",\"\n\r") == std::string::npos;
}

void fuzz_step_csv(const fs::path& dir, const std::string& text) {
  const fs::path path = dir / "grad_norms.csv", copy = dir / "copy.csv";
  fuzz::write_file(path.string(), reinterpret_cast<const uint8_t*>(text.data()), text.size());
  CsvTable table;
  try {
    table = read_step_csv(path);
  } catch (const Error&) {
    return;
  }
  for (const std::string& name : table.columns)
    if (!writable(name)) return;
  if (table.rows.empty()) return;
  const std::vector<std::string> names(table.columns.begin() + 1, table.columns.end());
  fs::remove(copy);
  {
    StepCsvWriter writer(copy, "fuzz");
    for (const auto& row : table.rows)
      writer.write(static_cast<int64_t>(row[0]), names, std::vector<double>(row.begin() + 1, row.end()));
  }
  const CsvTable back = read_step_csv(copy);
  bool equal = back.columns == table.columns && back.rows.size() == table.rows.size();
  for (size_t r = 0; equal && r < back.rows.size(); ++r)
    for (size_t c = 0; equal && c < back.rows[r].size(); ++c) equal = same(back.rows[r][c], table.rows[r][c]);
  if (!equal) fuzz::property_failed("a step table written back reads differently", text);
}

void fuzz_metrics(const fs::path& dir, const std::string& text) {
  const fs::path path = dir / run_files::kMetrics;
  fuzz::write_file(path.string(), reinterpret_cast<const uint8_t*>(text.data()), text.size());
  try {
    (void)read_metrics(path);
  } catch (const Error&) {
  }
}

void fuzz_summary(const fs::path& dir, const std::string& text) {
  static const std::string config = config_to_toml(RunConfig{});
  fuzz::write_file((dir / run_files::kConfig).string(), reinterpret_cast<const uint8_t*>(config.data()), config.size());
  const fs::path path = dir / run_files::kSummary;
  fuzz::write_file(path.string(), reinterpret_cast<const uint8_t*>(text.data()), text.size());
  try {
    (void)training::finished_result(dir);
  } catch (const Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const fs::path dir = fuzz::scratch_path("step-files");
  fs::create_directories(dir);
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 3 == 0) fuzz_step_csv(dir, text);
  else if (data[0] % 3 == 1) fuzz_metrics(dir, text);
  else fuzz_summary(dir, text);
  return 0;
}
