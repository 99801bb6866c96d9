#include "train/tensorboard.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "core/files.h"
#include "io/atomic_file.h"
#include "train/run_dir.h"
#include "io/tensorboard_format.h"

namespace fs = std::filesystem;

namespace normlab {
namespace {

double wall_time_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

// events.out.tfevents.<unix seconds>.<host>, TensorFlow's name for a new event file.
fs::path new_event_file_name(const fs::path& run_dir) {
  const auto seconds = static_cast<int64_t>(wall_time_now());
  return run_dir / fmt::format("{}{}.{}", kEventFilePrefix, seconds, host_name());
}

// Rewrites an event file with its first file_version record and the events at steps <= keep.
void cut_back(const fs::path& file, int64_t keep_through_step) {
  const std::string bytes = read_whole_file(file, "tensorboard");
  std::string kept;
  for (const std::string_view record : tensorboard::split_records(bytes)) {
    const auto info = tensorboard::read_event_info(tensorboard::record_data(record));
    if (!info) break;  // not an Event we could have written: stop, as at a damaged record
    if (info->has_file_version ? kept.empty() : info->step <= keep_through_step) kept += record;
  }
  write_file_atomic(file.string(), kept);
}

// The tag of a grad_norms.csv extra column: its first '.' becomes '/' (residual_rms.0 -> residual_rms/0).
std::string extra_tag(std::string column) {
  if (const size_t dot = column.find('.'); dot != std::string::npos) column[dot] = '/';
  return column;
}

}  // namespace

std::vector<fs::path> event_files(const fs::path& run_dir) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(run_dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.rfind(kEventFilePrefix, 0) == 0 && name.find(".tmp.") == std::string::npos)
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TensorBoardWriter::TensorBoardWriter(const fs::path& run_dir, std::optional<int64_t> keep_through_step) {
  const std::vector<fs::path> existing = keep_through_step ? event_files(run_dir) : std::vector<fs::path>{};
  for (const fs::path& file : existing) cut_back(file, *keep_through_step);
  path_ = existing.empty() ? new_event_file_name(run_dir) : existing.back();
  const bool fresh = existing.empty() || fs::file_size(path_) == 0;
  out_.open(path_, std::ios::binary | std::ios::app);
  NL_CHECK(out_.good(), "tensorboard", "cannot open '{}' for writing", path_.string());
  if (fresh) {
    out_ << tensorboard::frame_record(tensorboard::file_version_event(wall_time_now()));
    out_.flush();
    NL_CHECK(out_.good(), "tensorboard", "writing '{}' failed", path_.string());
  }
}

void TensorBoardWriter::write(int64_t step, const std::vector<std::pair<std::string, double>>& values) {
  std::vector<std::pair<std::string, float>> scalars;
  for (const auto& [tag, value] : values) scalars.emplace_back(tag, static_cast<float>(value));
  out_ << tensorboard::frame_record(tensorboard::scalars_event(wall_time_now(), step, scalars));
  out_.flush();
  NL_CHECK(out_.good(), "tensorboard", "writing '{}' failed", path_.string());
}

void TensorBoardWriter::write_metrics(const nlohmann::json& record) {
  NL_CHECK(record.contains(kStepKey) && record[kStepKey].is_number_integer(), "tensorboard",
           "a metrics record without an integer \"{}\": {}", kStepKey, record.dump());
  std::vector<std::pair<std::string, double>> values;
  for (const auto& [key, value] : record.items()) {
    if (key == kStepKey || !(value.is_number() || value.is_null())) continue;  // "diverged": the reason
    const std::string tag = key == kValLossKey ? "val/loss" : key == kTrainLossKey ? "train/loss" : "train/" + key;
    values.emplace_back(tag, value.is_null() ? NAN : value.get<double>());
  }
  write(record[kStepKey].get<int64_t>(), values);
}

void TensorBoardWriter::write_grad_norms(int64_t step, const std::vector<ParamGradNorm>& norms,
                                         const std::vector<std::pair<std::string, double>>& extra) {
  std::vector<std::string> extra_names;
  for (const auto& [name, _] : extra) extra_names.push_back(name);
  const std::vector<std::string> columns = grad_norm_columns(norms, extra_names);  // step first
  const std::vector<double> cells = grad_norm_values(norms, extra);
  const size_t first_extra = columns.size() - extra.size();
  std::vector<std::pair<std::string, double>> values;
  for (size_t c = 1; c < columns.size(); ++c)
    values.emplace_back(c < first_extra ? "grad_norm/" + columns[c] : extra_tag(columns[c]), cells[c - 1]);
  write(step, values);
}

}  // namespace normlab
