// A run directory, out_dir/name/, and the files a trainer writes into it:
//   config.toml       the resolved configuration (config_to_toml), written at the start
//   metrics.jsonl     one JSON object per line, flushed as written: {"step": 10, "train_loss": 3.2,
//                     "lr": 0.001, "grad_norm": 1.4, "tokens_per_s": 5000}, {"step": 100, "val_loss": 3.4}
//                     "step" counts updates from 1, as the progress line does: row s holds the loss
//                     and gradient of update s (measured before it; step 1's are at initialization)
//                     and the validation loss after it; the last row is step train.steps
//                     (ffn_type "moe" adds "router_aux_loss", the unscaled load-balancing loss; train_loss
//                     then includes router_aux_loss_coef times it)
//                     (model.z_loss_coef > 0: train_loss includes that times the z-loss, the mean
//                     lse^2 of the logits; val_loss stays the plain cross-entropy)
//                     (the keys below are what the plots read; NaN/Inf are written as null)
//   grad_norms.csv    wide CSV: step, one column per parameter, layer.N (L2 norm over the parameters
//                     named "blocks.N.*"), global (L2 norm over all), then any extra columns the
//                     trainer adds (e.g. residual_rms.N); numbered as metrics.jsonl (step 1: the
//                     gradient at initialization)
//   dynamics.csv      with log.dynamics_steps = N: the mechanism quantities of updates 1..N, one
//                     row each (train/dynamics.h)
//   summary.json      written last, atomically: its presence marks the run as completed
//   fingerprint.txt   config_fingerprint of the config the run was started with (a sweep compares it)
//   events.out.tfevents.*   with log.tensorboard, metrics and gradient norms for TensorBoard
//                     (train/tensorboard.h)
//   checkpoint, checkpoints/   the current checkpoint generation and its directory (train/checkpoint.h)
//   .normlab.lock     the writer's lock (io/directory_lock.h); it stays after the run
#pragma once
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/csv.h"
#include "io/directory_lock.h"
#include "train/grad_stats.h"

namespace normlab {

namespace run_files {
inline constexpr const char* kConfig = "config.toml";
inline constexpr const char* kMetrics = "metrics.jsonl";
inline constexpr const char* kGradNorms = "grad_norms.csv";
inline constexpr const char* kDynamics = "dynamics.csv";
inline constexpr const char* kSummary = "summary.json";
inline constexpr const char* kProvenance = "provenance.json";  // train/provenance.h
inline constexpr const char* kTestHypotheses = "test_hypotheses.txt";  // log.test_beam, the scored checkpoint
inline constexpr const char* kTestHypothesesLast = "test_hypotheses_last.txt";  // log.test_beam, the last weights
inline constexpr const char* kFingerprint = "fingerprint.txt";
inline constexpr const char* kTokenizer = "tokenizer.json";
inline constexpr const char* kTokenizerModel = "sentencepiece.model";  // data/sentencepiece.h's kSentencePieceFile
}  // namespace run_files

// Keys of metrics.jsonl records that the plots (plot/plot.h) read.
inline constexpr const char* kStepKey = "step";
inline constexpr const char* kTrainLossKey = "train_loss";
inline constexpr const char* kValLossKey = "val_loss";

// How a run opens its directory:
//   fresh      the directory must be new or empty: a non-empty one is refused (resume it, or
//              start it over with overwrite);
//   overwrite  a directory normlab wrote before (it holds .normlab.lock, or a config.toml that
//              normlab wrote) is emptied under the lock; any other non-empty directory is refused;
//   resume     the directory must exist; its contents are the trainer's to check.
enum class RunDirMode { fresh, overwrite, resume };

// An open run directory: out_dir/name, and the lock that makes this process its only writer.
struct RunDir {
  std::filesystem::path path;
  DirectoryLock lock;
};

// Creates (if needed) and locks out_dir/name; the lock is taken before anything in it is written
// or removed. Throws naming the directory (and the lock holder's pid when another writer has it).
RunDir prepare_run_dir(const std::string& out_dir, const std::string& name, RunDirMode mode);
// Completed = summary.json exists and its "status" is not "stopped" or "interrupted" (a run stopped early
// to be resumed); a run that diverged is a completed result.
bool is_completed_run(const std::filesystem::path& run_dir);
// Removes what a run wrote while training (the summary first, then logs and checkpoints), keeping
// what defines it (config.toml, fingerprint.txt, tokenizer.json, sentencepiece.model), its history
// (provenance.json) and the lock: a run with no
// checkpoint is started again this way by --resume. Only under the run's lock.
void remove_training_outputs(const std::filesystem::path& run_dir);

// Appends JSON lines to metrics.jsonl. keep_through_step: nullopt starts a fresh file; a step
// keeps the existing records with "step" <= it (a resumed run drops what came after its
// checkpoint, which holds `step` updates) and appends after them.
class MetricsWriter {
 public:
  explicit MetricsWriter(const std::filesystem::path& path,
                         std::optional<int64_t> keep_through_step = std::nullopt);
  void write(const nlohmann::json& record);  // one line, flushed

 private:
  std::filesystem::path path_;
  std::ofstream out_;
};

// A wide CSV whose first column is "step" (grad_norms.csv, dynamics.csv): the header is written
// with the first row, and every later row must name the same columns in the same order.
// keep_through_step as MetricsWriter's (the kept file's header must match the first row written).
// Errors are prefixed with `what`.
class StepCsvWriter {
 public:
  StepCsvWriter(const std::filesystem::path& path, std::string what,
                std::optional<int64_t> keep_through_step = std::nullopt);
  // One row: the step, then values[i] under columns[i] (the names after "step").
  void write(int64_t step, const std::vector<std::string>& columns, const std::vector<double>& values);

 private:
  std::filesystem::path path_;
  std::string what_;
  std::ofstream out_;
  std::vector<std::string> header_;  // empty until the first row (or taken from a kept file)
};

// Writes grad_norms.csv (columns: grad_norm_columns below).
class GradNormWriter {
 public:
  explicit GradNormWriter(const std::filesystem::path& path,
                          std::optional<int64_t> keep_through_step = std::nullopt);
  // norms: each parameter's gradient norm and layer (train/grad_stats.h); extra: more columns
  // written after "global" as given (e.g. ("residual_rms.0", 1.3)). Returns the parameters whose
  // norm is exactly 0: a gradient that never arrived usually means a cut graph.
  std::vector<std::string> write(int64_t step, const std::vector<ParamGradNorm>& norms,
                                 const std::vector<std::pair<std::string, double>>& extra = {});

 private:
  StepCsvWriter csv_;
};

// The prefix of a layer's parameter names and of its dynamics columns: "blocks.3.", "encoder.3.",
// "decoder.3.".
std::string block_prefix(const LayerKey& key);
// The per-layer column a layer's parameters add to: "layer.N" for a single stack's, "encoder.layer.N"
// and "decoder.layer.N" for an encoder-decoder's; "" outside every layer.
std::string layer_column_of(const std::optional<LayerKey>& key);
// The CSV columns: step, the parameter names, the layer columns present (decoder-only layer.N, or
// encoder.layer.N then decoder.layer.N), global, the extra names.
std::vector<std::string> grad_norm_columns(const std::vector<ParamGradNorm>& norms,
                                           const std::vector<std::string>& extra_names = {});
// A row's values for the columns after step, in grad_norm_columns order (GradNormWriter::write's
// arguments): each norm, each layer.N, global, each extra value.
std::vector<double> grad_norm_values(const std::vector<ParamGradNorm>& norms,
                                     const std::vector<std::pair<std::string, double>>& extra = {});

// Reading back, for the plots, resume and Python (normlab.runs): metrics.jsonl's records (a last
// line cut short by a run still writing it is left out; any other line that is not a JSON object
// is an error naming file:line).
std::vector<nlohmann::json> read_metrics(const std::filesystem::path& path);
// A step table (grad_norms.csv, dynamics.csv): the header, whose first column is "step" and whose
// names are distinct, then one row per line with as many cells as the header, each a number (nan,
// inf, -inf as written) or empty (NaN), the step a whole number. A last line without its newline
// (a run still writing it) is left out; any other malformed line is an error naming file:line and
// the column.
CsvTable read_step_csv(const std::filesystem::path& path);

// summary.json, written atomically (pretty-printed).
void write_summary(const std::filesystem::path& run_dir, const nlohmann::json& summary);

}  // namespace normlab
