// TensorBoard event files for a run (log.tensorboard = true): `tensorboard --logdir runs/` shows
// the same numbers as metrics.jsonl and grad_norms.csv, as scalars with these tags:
//   metrics.jsonl   train_loss -> train/loss, val_loss -> val/loss, any other number K (lr,
//                   grad_norm (before clipping), tokens_per_s) -> train/K
//   grad_norms.csv  a parameter, layer.N or global column C -> grad_norm/C
//                   (grad_norm/blocks.0.attn.q.weight, grad_norm/layer.0, grad_norm/global);
//                   an extra column residual_rms.N -> residual_rms/N
// The file is events.out.tfevents.<unix seconds>.<host> in the run directory (the bytes:
// io/tensorboard_format.h). Every logging step is one Event, flushed as written, so a killed
// run leaves whole records and at most one cut-short record at the end, which TensorBoard skips.
// A resumed run keeps one file with no repeated step: it cuts the run's event files back to its
// checkpoint, as it does metrics.jsonl, and appends to the newest one.
#pragma once
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/grad_stats.h"

namespace normlab {

inline constexpr const char* kEventFilePrefix = "events.out.tfevents.";

class TensorBoardWriter {
 public:
  // keep_through_step: nullopt starts a new file; a step keeps, in every event file of run_dir,
  // the events with step <= it (a cut-short or damaged record ends what is kept) and appends to
  // the newest file. Throws naming the file.
  explicit TensorBoardWriter(const std::filesystem::path& run_dir,
                             std::optional<int64_t> keep_through_step = std::nullopt);

  // One metrics.jsonl record: its numbers at its "step" (null, i.e. NaN, is written as NaN).
  void write_metrics(const nlohmann::json& record);
  // One grad_norms.csv row: the arguments of GradNormWriter::write (train/run_dir.h).
  void write_grad_norms(int64_t step, const std::vector<ParamGradNorm>& norms,
                        const std::vector<std::pair<std::string, double>>& extra);
  // One Event: every (tag, value) at `step`, flushed.
  void write(int64_t step, const std::vector<std::pair<std::string, double>>& values);

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::ofstream out_;
};

// The event files of a run directory, sorted by name (oldest first).
std::vector<std::filesystem::path> event_files(const std::filesystem::path& run_dir);

}  // namespace normlab
