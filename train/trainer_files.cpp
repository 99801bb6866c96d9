#include "train/trainer_files.h"

#include <fmt/format.h>

#include "autograd/autocast.h"
#include "autograd/ops.h"
#include "autograd/tape.h"
#include "core/backend.h"
#include "core/cpu/blas_core.h"
#include "core/cpu/f32_gemm.h"
#include "core/cpu/half_gemm.h"
#include "core/ops.h"
#include "io/atomic_file.h"
#include "train/checkpoint.h"
#include "config/config.h"
#include "dist/data_parallel.h"
#include "io/fault_injection.h"
#include "train/grad_stats.h"
#include "train/memory_estimate.h"
#include "train/provenance.h"
#include "train/run_dir.h"
#include "train/tensorboard.h"
#include "train/trainer_anomaly.h"
#include "train/translate.h"
#include "nn/transformer.h"
#include "optim/loss_scaler.h"
#include "optim/schedule.h"

namespace fs = std::filesystem;

namespace normlab::training {

// A metrics.jsonl record, and the same numbers as TensorBoard scalars when they are on (rank 0 only).
void log_metrics(RunFiles& files, const nlohmann::json& record) {
  if (files.metrics) files.metrics->write(record);
  if (files.events) files.events->write_metrics(record);
}

// Locks the run directory, writes a fresh run's config files or restores a resumed run's
// checkpoint (checked before anything changes), then opens the logs; returns the first step.
int64_t open_run_files(RunFiles& files, const RunConfig& c, const RunConfig& given, const TrainOptions& options,
                       const Dataset& data, TransformerLM& model, Optimizer& optimizer, Generator& data_gen,
                       LossScaler& scaler) {
  const bool resuming = !options.resume_dir.empty();
  const fs::path resume_path = fs::path(options.resume_dir).lexically_normal();
  files.dir.emplace(resuming ? prepare_run_dir(resume_path.parent_path().string(), resume_path.filename().string(), RunDirMode::resume)
                             : prepare_run_dir(c.train.out_dir, c.train.name, options.overwrite ? RunDirMode::overwrite : RunDirMode::fresh));
  const fs::path& dir = files.dir->path;
  if (resuming) read_sittings(dir);  // a damaged provenance.json stops the resume before anything changes
  int64_t start_step = 0;
  std::optional<int64_t> keep_logs_through;  // a resumed run drops what was logged after its checkpoint
  if (!resuming) {
    write_file_atomic((dir / run_files::kConfig).string(), config_to_toml(c));
    write_file_atomic((dir / run_files::kFingerprint).string(), config_fingerprint(given) + "\n");
    if (const Tokenizer* tokenizer = data.tokenizer()) {  // its files first: tokenizer.json names them
      for (const TokenizerFile& file : tokenizer->files()) write_file_atomic((dir / file.name).string(), file.bytes);
      write_file_atomic((dir / run_files::kTokenizer).string(), tokenizer->to_json());
    }
  } else if (is_completed_run(dir) && !files.extending) {  // nothing to do: its checkpoint is checked, no file of it changes
    if (has_checkpoint(dir.string())) start_step = load_checkpoint(dir.string(), model, optimizer, data_gen, &scaler);
    remove_stale_checkpoint_files(dir.string());  // only what a failed writer left (ENOSPC on a removal)
    files.finished = true;
    return start_step;
  } else if (!has_checkpoint(dir.string())) {  // killed before its first checkpoint: from step 0 again
    fmt::print(stderr, "[train] '{}' has no checkpoint (it stopped before its first one): starting it again from "
               "step 0\n", dir.string());
    remove_training_outputs(dir);
  } else {
    // load_checkpoint checks every file before it changes anything; only a checkpoint that
    // passed may cut the logs back to its step (below) and drop the summary.
    start_step = load_checkpoint(dir.string(), model, optimizer, data_gen, &scaler);
    keep_logs_through = start_step;  // rows are numbered by update: 1..start_step are done
    fs::remove(dir / run_files::kSummary);
  }
  if (files.extending) {  // after the summary is gone: a kill in between leaves a resumable run of the old length
    write_file_atomic((dir / run_files::kConfig).string(), config_to_toml(c));
    write_file_atomic((dir / run_files::kFingerprint).string(), config_fingerprint(c) + "\n");
  }
  remove_stale_checkpoint_files(dir.string());  // what a killed or failed writer left behind
  record_sitting(dir, current_sitting(start_step));
  files.metrics.emplace(dir / run_files::kMetrics, keep_logs_through);
  files.grad_log.emplace(dir / run_files::kGradNorms, keep_logs_through);
  if (c.log.tensorboard) files.events.emplace(dir, keep_logs_through);
  if (c.log.dynamics_steps > 0)
    files.dynamics.emplace(c, data, dir, keep_logs_through, files.events ? &*files.events : nullptr);
  return start_step;
}

// A resumed run's summary covers the whole run: the losses logged before its checkpoint count.
void read_earlier_losses(const fs::path& dir, TrainResult& result) {
  for (const nlohmann::json& r : read_metrics(dir / run_files::kMetrics)) {
    if (r.contains(kTrainLossKey) && r[kTrainLossKey].is_number())
      result.final_train_loss = r[kTrainLossKey].get<double>();
    if (r.contains(kValLossKey) && r[kValLossKey].is_number()) {
      result.final_val_loss = r[kValLossKey].get<double>();
      result.best_val_loss = std::min(result.best_val_loss, result.final_val_loss);
    }
  }
}

bool extend_run_config(RunConfig& c, const fs::path& dir, const TrainOptions& options, bool quiet) {
  const bool by_epochs = c.train.epochs > 0;
  const char* unit = by_epochs ? "epochs" : "steps";
  const int64_t from = by_epochs ? c.train.epochs : c.train.steps;
  const int64_t to = by_epochs ? options.extend_to_epochs : options.extend_to_steps;
  const int64_t other = by_epochs ? options.extend_to_steps : options.extend_to_epochs;
  NL_CHECK(other <= 0, "train", "override 'train.{}={}': '{}' counts {} (train.{} = {}): extend it with train.{}=N",
           by_epochs ? "steps" : "epochs", other, dir.string(), unit, unit, from, unit);
  if (to <= 0 || to == from) return false;
  const std::string override_text = fmt::format("override 'train.{}={}'", unit, to);
  NL_CHECK(to > from, "train", "{}: '{}' runs to train.{} = {}; --resume extends a run (train.{} > {}), "
           "a shorter one is a new run", override_text, dir.string(), unit, from, unit, from);
  if (fs::exists(dir / run_files::kSummary)) {
    const TrainResult done = finished_result(dir);
    NL_CHECK(done.status != RunStatus::Diverged, "train", "{}: '{}' diverged at step {} ({}); it has no checkpoint "
             "past the divergence to extend: start a new run", override_text, dir.string(), done.steps_done, done.reason);
  }
  // The schedule sees steps: an epoch run's are its epochs times its batches per epoch.
  const int64_t from_steps = c.train.steps, to_steps = by_epochs ? c.train.steps / from * to : to;
  const ScheduleKind kind = c.schedule.kind;
  const bool decays_to_the_end = kind == ScheduleKind::Linear || kind == ScheduleKind::Cosine;
  const double lr_after = learning_rate(c.schedule, c.optim.lr, from_steps, to_steps);
  const std::string change = fmt::format(
      "schedule.kind '{}' decays to schedule.min_lr ({}) at train.steps, so steps {}..{} follow the {}-step schedule "
      "(lr {:.4g} at step {}, where the {}-step schedule had reached min_lr): the result is not a {}-step run from "
      "scratch", enum_name(kind), c.schedule.min_lr, from_steps, to_steps - 1, to_steps, lr_after, from_steps,
      from_steps, to_steps);
  NL_CHECK(!decays_to_the_end || options.allow_schedule_change, "train", "{}: {}. Add --allow-schedule-change to "
           "extend '{}' anyway, or start a new run with train.{}={}", override_text, change, dir.string(), unit, to);
  (by_epochs ? c.train.epochs : c.train.steps) = to;
  c.train.steps = to_steps;
  if (!quiet)
    fmt::print(stderr, "[train] extending '{}' from {} to {} {} (its config.toml now says train.{} = {}){}\n",
               dir.string(), from, to, unit, unit, to, decays_to_the_end ? "; " + change : "");
  return true;
}

namespace {
double number_or_nan(const nlohmann::json& summary, const char* key) {
  return summary.contains(key) && summary[key].is_number() ? summary[key].get<double>() : NAN;
}
}  // namespace

TrainResult finished_result(const fs::path& dir) {
  const fs::path path = dir / run_files::kSummary;
  std::ifstream in(path);
  const nlohmann::json summary = nlohmann::json::parse(in, nullptr, false);
  NL_CHECK(summary.is_object() && summary.contains("status") && summary["status"].is_string() &&
               summary.contains("steps_done") && summary["steps_done"].is_number_integer(),
           "train", "cannot read '{}': not a summary that normlab wrote", path.string());
  const std::optional<RunStatus> status = parse_enum<RunStatus>(summary["status"].get<std::string>());
  NL_CHECK(status.has_value(), "train", "'{}': unknown status '{}'", path.string(), summary["status"].get<std::string>());
  TrainResult result;
  result.run_dir = dir.string();
  result.status = *status;
  result.steps_done = summary["steps_done"].get<int64_t>();
  if (summary.contains("reason") && summary["reason"].is_string()) result.reason = summary["reason"].get<std::string>();
  result.final_train_loss = number_or_nan(summary, "final_train_loss");
  result.final_val_loss = number_or_nan(summary, "final_val_loss");
  result.best_val_loss = number_or_nan(summary, "best_val_loss");
  result.tokens_per_second = number_or_nan(summary, "tokens_per_s");
  result.wall_seconds = number_or_nan(summary, "wall_s");
  result.fail_on_divergence = load_config((dir / run_files::kConfig).string(), {}).train.fail_on_divergence;
  return result;
}

// Gradient norms (all-reduced gradients) and the residual-stream RMS over the global batch; every
// rank computes them (a collective), rank 0 writes them.
void log_grad_norms(RunFiles& files, const TransformerLM& model, int64_t step, bool warn, Communicator& comm) {
  std::vector<std::pair<std::string, double>> rms;
  for (size_t l = 0; l < model.residual_rms().size(); ++l)
    rms.emplace_back(fmt::format("residual_rms.{}", l), global_rms(model.residual_rms()[l], comm));
  if (!files.grad_log) return;
  const auto norms = parameter_grad_norms(model.named_parameters());
  const auto zero = files.grad_log->write(step, norms, rms);
  if (files.events) files.events->write_grad_norms(step, norms, rms);
  if (warn && !zero.empty())
    fmt::print(stderr, "warning: {} parameter(s) got an exactly zero gradient (a cut graph?), e.g. {}\n",
               zero.size(), zero.front());
}

namespace {

// The GEMM kernels that computed a CPU run: they round differently, so the same config trained
// with other kernels differs in its last bits (README "Float32 GEMM").
nlohmann::json cpu_kernels_json(Precision precision) {
  nlohmann::json kernels = {{"blas", blas_core_description()}, {"fp32_gemm", f32_gemm_description()}};
  if (precision != Precision::Fp32) kernels["half_gemm"] = half_gemm_description(compute_dtype(precision));
  return kernels;
}

}  // namespace

namespace {

// The step RUN/best was saved at (best.json), or -1 when the run has none.
int64_t best_checkpoint_step(const fs::path& dir) {
  const fs::path path = dir / "best.json";
  if (!fs::exists(path) || !has_checkpoint((dir / "best").string())) return -1;
  std::ifstream in(path);
  const nlohmann::json best = nlohmann::json::parse(in, nullptr, false);
  NL_CHECK(best.is_object() && best.contains("step") && best["step"].is_number_integer(), "train",
           "cannot read '{}': no integer \"step\"", path.string());
  return best["step"].get<int64_t>();
}

// Decodes the test split and writes the translations, one a line, to each of `paths`.
SplitScore score_test_hypotheses(const RunConfig& c, const PairDataset& pairs, TransformerLM& model,
                                 const std::vector<fs::path>& paths) {
  SplitScore score =
      score_split(model, pairs, EvalSplit::Test, INT64_MAX, {c.log.test_beam, 0, c.log.test_length_penalty});
  std::string text;
  for (const std::string& line : score.hypotheses) text += line + "\n";
  for (const fs::path& path : paths) write_file_atomic(path.string(), text);
  return score;
}

}  // namespace

void score_test_split(const RunConfig& c, const PairDataset& pairs, TransformerLM& model, const fs::path& dir,
                      TrainResult& result) {
  const int64_t best_step = best_checkpoint_step(dir);
  const bool best_is_last = best_step < 0 || best_step == result.steps_done;
  std::vector<fs::path> last_paths = {dir / run_files::kTestHypothesesLast};
  if (best_is_last) last_paths.push_back(dir / run_files::kTestHypotheses);
  const SplitScore last = score_test_hypotheses(c, pairs, model, last_paths);
  result.test_bleu_last = last.bleu.score;
  result.test_chrf_last = last.chrf.score;
  result.test_checkpoint = best_step >= 0 ? "best" : "last";
  SplitScore scored = last;
  if (!best_is_last) {
    load_model_weights((dir / "best").string(), model);
    scored = score_test_hypotheses(c, pairs, model, {dir / run_files::kTestHypotheses});
  }
  result.test_bleu = scored.bleu.score;
  result.test_chrf = scored.chrf.score;
  result.test_bleu_signature = scored.bleu.signature;
  fmt::print(stderr, "[train] test split, beam {}, length penalty {}: {} checkpoint {}  {}; last weights {}  {}\n",
             c.log.test_beam, c.log.test_length_penalty, result.test_checkpoint, scored.bleu.format(),
             scored.chrf.format(), last.bleu.format(), last.chrf.format());
}

void write_final_summary(const fs::path& dir, const TrainResult& result, const RunConfig& c, const TransformerLM& model,
                         const LossScaler& scaler) {
  nlohmann::json summary = {{"status", enum_name(result.status)},
                            {"steps_done", result.steps_done},
                            {"steps", c.train.steps},
                            {"final_train_loss", result.final_train_loss},
                            {"final_val_loss", result.final_val_loss},
                            {"best_val_loss", result.best_val_loss},
                            {"tokens_per_s", result.tokens_per_second},
                            {"wall_s", result.wall_seconds},
                            {"parameters", model.parameter_count()},
                            {"precision", enum_name(c.train.precision)}};
  if (std::isfinite(result.bleu)) summary["bleu"] = result.bleu;
  if (!result.test_checkpoint.empty()) {
    summary["test_bleu"] = result.test_bleu;
    summary["test_chrf"] = result.test_chrf;
    summary["test_bleu_signature"] = result.test_bleu_signature;
    summary["test_checkpoint"] = result.test_checkpoint;
    summary["test_bleu_last"] = result.test_bleu_last;
    summary["test_chrf_last"] = result.test_chrf_last;
  }
  if (c.train.device.kind == DeviceKind::CPU) summary["cpu_kernels"] = cpu_kernels_json(c.train.precision);
  if (scaler.enabled()) {
    summary["loss_scale"] = scaler.scale();
    summary["skipped_steps"] = scaler.state().skipped_steps;
  }
  if (result.status == RunStatus::Diverged) {
    summary["diverged_at_step"] = result.steps_done + 1;  // the update that diverged (not applied)
    summary["reason"] = result.reason;
    if (result.anomaly) summary["anomaly"] = anomaly_json(*result.anomaly);
  }
  summary.update(provenance_summary(dir));
  write_summary(dir, summary);
}

// The checkpoint of `step`: every rank checks that it holds rank 0's weights, rank 0 saves.
void checkpoint(RunFiles& files, const TransformerLM& model, const Optimizer& optimizer, const Generator& data_gen,
                const LossScaler& scaler, int64_t step, Communicator& comm) {
  check_replicas_agree(model, step, comm);
  if (files.dir) save_checkpoint(files.dir->path.string(), model, optimizer, data_gen, step, &scaler);
}

}  // namespace normlab::training
