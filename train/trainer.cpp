#include "train/trainer.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>

#include "autograd/autocast.h"
#include "autograd/ops.h"
#include "core/backend.h"
#include "core/denormals.h"
#include "core/ops.h"
#include "io/atomic_file.h"
#include "train/checkpoint.h"
#include "train/epoch_batches.h"
#include "config/config.h"
#include "data/seq2seq.h"
#include "dist/data_parallel.h"
#include "io/fault_injection.h"
#include "train/grad_stats.h"
#include "train/memory_estimate.h"
#include "train/run_dir.h"
#include "train/stop_signals.h"
#include "train/tensorboard.h"
#include "train/trainer_anomaly.h"
#include "train/trainer_files.h"
#include "train/train_step.h"
#include "train/translate.h"
#include "nn/transformer.h"
#include "optim/loss_scaler.h"
#include "optim/schedule.h"

namespace fs = std::filesystem;

namespace normlab {

namespace {

using namespace training;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Mean loss over log.eval_batches validation batches drawn from a generator of their own, so that
// evaluating never changes the training data stream. Each rank evaluates its shard of every batch.
// With train.max_tokens: the whole validation split instead, each batch weighted by its tokens.
double validation_loss(TransformerLM& model, const Dataset& data, const RunConfig& c, Communicator& comm,
                       const EpochBatches* epochs) {
  NoGradGuard no_grad;
  AutocastGuard autocast(compute_dtype(c.train.precision));  // evaluated as it trains
  model.eval();
  if (epochs && !epochs->validation_batches().empty()) {
    double weighted = 0.0;
    int64_t tokens = 0;
    for (const Batch& b : epochs->validation_batches()) {
      const int64_t n = counted_tokens(b);
      weighted += model.loss(b.inputs, b.targets, b.sources, b.source_padding).item() * static_cast<double>(n);
      tokens += n;
    }
    model.train();
    return weighted / static_cast<double>(tokens);
  }
  Generator gen(c.train.seed * 1000003ull + 7919ull);
  double total = 0.0;
  for (int64_t i = 0; i < c.log.eval_batches; ++i) {
    const Batch b = shard_of(data.sample(true, c.train.batch_size, c.train.context, gen), comm);
    total += global_mean(model.loss(b.inputs, b.targets, b.sources, b.source_padding).item(), counted_tokens(b), comm);
  }
  model.train();
  return total / static_cast<double>(std::max<int64_t>(c.log.eval_batches, 1));
}

void print_progress(bool tty, int64_t step, int64_t total, double loss, double lr, double tps,
                    double elapsed) {
  const double eta = step > 0 ? elapsed / static_cast<double>(step) * static_cast<double>(total - step) : 0.0;
  if (tty) {
    fmt::print(stderr, "\r  step {:>6}/{:<6} loss {:.4f}  lr {:.2e}  {:>8.0f} tok/s  ETA {:>5.0f}s ", step,
               total, loss, lr, tps, eta);
  } else {
    fmt::print(stderr, "  step {}/{} loss {:.4f} lr {:.2e} {:.0f} tok/s ETA {:.0f}s\n", step, total, loss,
               lr, tps, eta);
  }
}

nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

// Gradient norms and the residual-stream RMS are logged at the first update (the gradient at
// initialization), at every log.grad_norm_every-th update, and at the last. `step` counts from 0
// here; the logs number the update step + 1 (train/run_dir.h).
bool logs_grad_norms(const RunConfig& c, int64_t step) {
  const int64_t update = step + 1;
  return step == 0 || update == c.train.steps || (c.log.grad_norm_every > 0 && update % c.log.grad_norm_every == 0);
}

// What the training loop carries from one step to the next.
struct TrainState {
  explicit TrainState(Communicator& comm) : comm(comm) {}
  Communicator& comm;
  RunConfig c;  // the resolved config (a resumed run's own config.toml)
  bool quiet = false, tty = false, moe = false;
  std::unique_ptr<Dataset> data;
  std::optional<EpochBatches> epochs;  // train.max_tokens > 0
  std::optional<TransformerLM> model;  // on train.device; batches follow it
  std::unique_ptr<Optimizer> optimizer;
  Generator data_gen;
  LossScaler scaler;  // enabled for train.precision = fp16
  TrainResult result;
  RunFiles files;
  int64_t start_step = 0, end_step = 0, tokens_per_step = 0;
  Clock::time_point t_start = Clock::now(), t_checkpoint = Clock::now();
  double checkpoint_seconds = 600;  // TrainOptions::checkpoint_seconds
  double tokens_per_second = 0.0, train_seconds = 0.0;  // throughput over the steps timed so far
  int64_t timed_steps = 0;
};

// Both splits give a batch of train.context (validation is evaluated at least at the last step):
// checked by drawing one window of each from a generator of its own, before the run directory exists.
void check_both_splits(const Dataset& data, const RunConfig& c) {
  if (const PairDataset* pairs = as_pair_dataset(data)) pairs->check_fits(c.train.context);  // names the pair
  Generator probe(0);
  (void)data.sample(false, 1, c.train.context, probe);
  (void)data.sample(true, 1, c.train.context, probe);
}

// train.max_tokens: the batches of every epoch (train/epoch_batches.h); train.epochs sets the steps.
void plan_epochs(TrainState& s) {
  RunConfig& c = s.c;
  if (c.train.max_tokens == 0) {
    NL_CHECK(c.train.epochs == 0, "train",
             "train.epochs = {} counts passes over batches of train.max_tokens tokens: set train.max_tokens too",
             c.train.epochs);
    return;
  }
  const PairDataset* pairs = as_pair_dataset(*s.data);
  NL_CHECK(pairs != nullptr, "train", "train.max_tokens batches sequence-to-sequence pairs; data.source '{}' has none",
           c.data.source);
  NL_CHECK(s.comm.size() == 1, "train", "train.max_tokens runs in one process (its batches have no fixed row count "
           "to split over {} ranks)", s.comm.size());
  NL_CHECK(c.log.test_beam == 0 || (c.train.epochs > 0 && !pairs->eval_pairs(EvalSplit::Test, 1).empty()), "train",
           "log.test_beam = {} decodes the test split of an epoch run: set train.epochs and use a corpus with a test "
           "split (data.source = \"corpus:DIR\")", c.log.test_beam);
  s.epochs.emplace(*pairs, c);
  if (c.train.epochs > 0) c.train.steps = c.train.epochs * s.epochs->batches_per_epoch();
  s.tokens_per_step = s.epochs->mean_tokens_per_batch();
  if (!s.quiet)
    fmt::print(stderr, "[train] {} batches of at most {} tokens per epoch ({:.1f}% padding){}\n",
               s.epochs->batches_per_epoch(), c.train.max_tokens, 100.0 * s.epochs->plan().padding_share(),
               c.train.epochs > 0 ? fmt::format(", {} epochs = {} steps", c.train.epochs, c.train.steps) : "");
}

// The config the memory estimate sees: with train.max_tokens, batches of max_tokens / context rows
// of train.context tokens (B T = max_tokens at the longest T, where attention costs most).
RunConfig memory_config(const RunConfig& c) {
  RunConfig estimate = c;
  if (c.train.max_tokens > 0) estimate.train.batch_size = std::max<int64_t>(1, c.train.max_tokens / c.train.context);
  return estimate;
}

// Resolves the config, checks that it fits this run, builds the data, the model (initialised on
// the host, then moved to train.device), the optimizer and the data generator.
void build_model_and_data(TrainState& s, const RunConfig& given, const TrainOptions& options) {
  s.quiet = options.quiet || !s.comm.is_root();
  s.checkpoint_seconds = options.checkpoint_seconds;
  s.c = options.resume_dir.empty() ? given : load_config((fs::path(options.resume_dir) / "config.toml").string(), {});
  RunConfig& c = s.c;
  if (!options.resume_dir.empty()) s.files.extending = extend_run_config(c, options.resume_dir, options, s.quiet);
  set_num_threads(c.train.threads);
  set_flush_denormals(c.train.flush_denormals);
  check_batch_divides(c.train.batch_size, s.comm);
  NL_CHECK(s.comm.size() == 1 || !c.train.detect_anomaly, "train",
           "train.detect_anomaly runs in one process (an anomaly on one rank cannot stop the others cleanly)");
  NL_CHECK(s.comm.size() == 1 || c.train.device.kind == DeviceKind::CPU, "train",
           "train.device = '{}': data-parallel training over MPI runs on the CPU (NCCL is not built)",
           c.train.device.str());
  // A resumed run decodes with the tokenizer it trained with (sentencepiece: its saved model).
  if (!options.resume_dir.empty()) c.data.saved_tokenizer_dir = options.resume_dir;
  s.data = make_dataset(c.data, c.model.arch == ModelArch::Encoder);  // encoder: masked-LM batches
  check_both_splits(*s.data, c);
  c.model.vocab_size = s.data->vocab_size();
  s.tokens_per_step = checked_mul(c.train.batch_size, c.train.context, "train", "train.batch_size * train.context");
  plan_epochs(s);
  check_training_memory(memory_config(c), s.quiet);  // before anything big is allocated
  s.model.emplace(c.model);
  s.model->to(c.train.device);
  s.optimizer = make_optimizer(c.optim, s.model->named_parameters());
  s.data_gen = Generator(c.train.seed);
  s.scaler = make_loss_scaler(c.train);
  s.moe = c.model.ffn_type == FfnType::Moe;
}

// Opens the run (rank 0: the locked run directory, fresh or restored from its checkpoint), gives
// every rank rank 0's state, and sets up the result of a run that does no step.
void open_run(TrainState& s, const RunConfig& given, const TrainOptions& options) {
  const bool resuming = !options.resume_dir.empty();
  TrainResult& result = s.result;
  result.run_dir = resuming ? fs::path(options.resume_dir).lexically_normal().string()
                            : (fs::path(s.c.train.out_dir) / s.c.train.name).string();
  if (s.comm.is_root())
    s.start_step =
        open_run_files(s.files, s.c, given, options, *s.data, *s.model, *s.optimizer, s.data_gen, s.scaler);
  // Every rank starts from rank 0's weights, optimizer state, data stream, loss scale and step.
  s.start_step = copy_from_root(*s.model, *s.optimizer, s.data_gen, s.start_step, s.comm);
  LossScaleState scale_state = s.scaler.state();
  s.comm.broadcast(&scale_state, sizeof scale_state, 0);
  s.scaler.set_state(scale_state);
  s.tty = !s.quiet && isatty(STDERR_FILENO);
  s.end_step = options.stop_after >= 0 ? std::min(s.c.train.steps, s.start_step + options.stop_after) : s.c.train.steps;
  result.status = RunStatus::Completed;
  // Never measured stays NaN (null in summary.json): a run that diverged before its first
  // evaluation has no validation loss, and 0 would read as the best one of a sweep.
  result.final_train_loss = result.final_val_loss = NAN;
  result.best_val_loss = INFINITY;
  result.steps_done = s.start_step;  // a resumed run with nothing left to do stays complete
  if (resuming && s.files.dir) read_earlier_losses(s.files.dir->path, result);
}

// This rank's shard of the step's global batch through the one training step (train_step.h),
// logging the gradient norms when due; the result's numbers are the global batch's.
StepResult run_step(TrainState& s, int64_t step) {
  const RunConfig& c = s.c;
  TransformerLM& model = *s.model;
  inject_rank_fault(s.comm.rank(), step);
  // Every rank draws the whole global batch (the same stream) and trains on its shard of rows.
  const Batch batch = s.epochs ? s.epochs->training_batch(step)
                               : shard_of(s.data->sample(false, c.train.batch_size, c.train.context, s.data_gen), s.comm);
  const bool log_norms = logs_grad_norms(c, step);
  DynamicsLog* dynamics = s.files.dynamics && s.files.dynamics->covers(step + 1) ? &*s.files.dynamics : nullptr;
  if (dynamics) dynamics->before_update(model);
  model.set_record_residual_rms(log_norms);  // the probe reads one number back per layer
  StepHooks hooks;
  if (log_norms || dynamics)
    hooks.on_gradients = [&] {
      if (log_norms) log_grad_norms(s.files, model, step + 1, step == s.start_step && !s.quiet, s.comm);
      if (dynamics) dynamics->record_gradients(model);
    };
  Learner learner{model, *s.optimizer, s.scaler};
  const StepResult out = train_step(learner, c, batch, step, s.comm, hooks);
  model.set_record_residual_rms(false);
  if (dynamics && out.divergence.empty()) dynamics->after_update(model, *s.optimizer, step + 1);
  if (out.divergence.empty()) {
    s.result.final_train_loss = out.loss;
    s.result.steps_done = step + 1;
  }
  return out;
}

// Divergence is a result: record where and why, keep everything logged so far.
void record_divergence(TrainState& s, int64_t step, const StepResult& out) {
  s.result.status = RunStatus::Diverged;
  s.result.reason = out.divergence;
  s.result.anomaly = out.anomaly;
  s.result.steps_done = step;
  const nlohmann::json loss = std::isfinite(out.loss) ? nlohmann::json(out.loss) : nlohmann::json(nullptr);
  log_metrics(s.files, {{"step", step + 1}, {"train_loss", loss}, {"lr", out.lr}, {"diverged", out.divergence}});
}

// A checkpoint after `steps_done` updates when train.checkpoint_every or the wall-time cadence
// (TrainOptions::checkpoint_seconds) says so; rank 0's clock decides for every rank.
void checkpoint_when_due(TrainState& s, int64_t steps_done) {
  int due = checkpoint_due(steps_done, s.c.train.checkpoint_every, seconds_since(s.t_checkpoint), s.checkpoint_seconds) ||
            (s.epochs && s.epochs->ends_epoch(steps_done));
  s.comm.broadcast(&due, sizeof due, 0);
  if (due == 0) return;
  checkpoint(s.files, *s.model, *s.optimizer, s.data_gen, s.scaler, steps_done, s.comm);
  s.t_checkpoint = Clock::now();
}

// At the end of an epoch (train.max_tokens), after its validation loss `val`: the epoch number and,
// with log.val_bleu, the greedy BLEU and chrF of the whole validation split into the metrics row;
// when `val` is the best so far, the weights and optimizer state as RUN/best (a checkpoint of its
// own, train/checkpoint.h) and RUN/best.json saying which epoch and step they are.
void end_epoch(TrainState& s, int64_t update, double val, nlohmann::json& row) {
  row["epoch"] = s.epochs->epoch_of_update(update);
  const PairDataset* pairs = as_pair_dataset(*s.data);
  if (s.c.log.val_bleu && pairs) {
    const SplitScore score = score_split(*s.model, *pairs, EvalSplit::Validation, INT64_MAX, {1, 0, 1.0});
    row["val_bleu"] = score.bleu.score;
    row["val_chrf"] = score.chrf.score;
  }
  if (val >= s.result.best_val_loss || !s.files.dir) return;
  const fs::path run_dir = s.files.dir->path;
  fs::create_directories(run_dir / "best");
  save_checkpoint((run_dir / "best").string(), *s.model, *s.optimizer, s.data_gen, update);
  nlohmann::json best = {{"epoch", row["epoch"]}, {"step", update}, {"val_loss", val}};
  if (row.contains("val_bleu")) best["val_bleu"] = row["val_bleu"];
  write_file_atomic((run_dir / "best.json").string(), best.dump(1) + "\n");
}

// After an update: the throughput, the metrics row (with the validation loss every
// log.eval_every updates and at the end), the progress line, and the checkpoint when due. The row
// is numbered by the update, step + 1, as the progress line is: a row logged every log.every
// updates (and at the first) falls on the same row as an evaluation every log.eval_every.
void after_step(TrainState& s, int64_t step, const StepResult& out, double step_seconds) {
  const RunConfig& c = s.c;
  if (step > s.start_step) {  // the first step pays one-time allocation costs
    s.train_seconds += step_seconds;
    ++s.timed_steps;
  }
  const double tokens = static_cast<double>(s.tokens_per_step);
  s.tokens_per_second = s.timed_steps > 0 ? tokens * static_cast<double>(s.timed_steps) / s.train_seconds
                                          : tokens / step_seconds;
  const int64_t update = step + 1;
  const bool last = update == c.train.steps;
  nlohmann::json row = {{"step", update}, {"train_loss", out.loss}, {"lr", out.lr},
                        {"grad_norm", finite_or_null(out.grad_norm)}, {"tokens_per_s", s.tokens_per_second}};
  if (s.scaler.enabled()) {
    row["loss_scale"] = s.scaler.scale();
    row["skipped_steps"] = s.scaler.state().skipped_steps;
    if (out.skipped) row["skipped"] = true;
  }
  if (s.moe) row["router_aux_loss"] = out.router_aux;
  const bool epoch_end = s.epochs && s.epochs->ends_epoch(update);
  if ((c.log.eval_every > 0 && update % c.log.eval_every == 0) || last || epoch_end) {
    const double val = validation_loss(*s.model, *s.data, c, s.comm, s.epochs ? &*s.epochs : nullptr);
    row["val_loss"] = val;
    s.result.final_val_loss = val;
    if (epoch_end) end_epoch(s, update, val, row);
    s.result.best_val_loss = std::min(s.result.best_val_loss, val);
  }
  if (step == 0 || update % std::max<int64_t>(c.log.every, 1) == 0 || last || out.skipped || row.contains("val_loss"))
    log_metrics(s.files, row);
  if (!s.quiet && (s.tty || step == 0 || update % std::max<int64_t>(c.log.every * 10, 1) == 0 || last))
    print_progress(s.tty, update, c.train.steps, out.loss, out.lr, s.tokens_per_second, seconds_since(s.t_start));
  if (!last) checkpoint_when_due(s, update);
}

// After the loop: the final status, the last checkpoint (not of a diverged run) and summary.json.
TrainResult finish(TrainState& s) {
  TrainResult& result = s.result;
  if (s.tty) fmt::print(stderr, "\n");
  if (result.status == RunStatus::Completed && result.steps_done < s.c.train.steps) result.status = RunStatus::Stopped;
  if (result.status == RunStatus::Interrupted && s.comm.is_root())
    fmt::print(stderr, "interrupted by {} after step {} of {}: checkpoint and summary written\n",
               result.stop_signal == SIGINT ? "SIGINT" : "SIGTERM", result.steps_done, s.c.train.steps);
  if (result.status != RunStatus::Diverged)
    checkpoint(s.files, *s.model, *s.optimizer, s.data_gen, s.scaler, result.steps_done, s.comm);
  if (std::isinf(result.best_val_loss)) result.best_val_loss = NAN;  // no evaluation happened
  if (result.status == RunStatus::Completed && s.c.log.bleu_pairs > 0 && s.files.dir)  // rank 0 writes summary.json
    if (const PairDataset* pairs = as_pair_dataset(*s.data))
      result.bleu = score_split(*s.model, *pairs, EvalSplit::Validation, s.c.log.bleu_pairs, {1, 0, 1.0}).bleu.score;
  if (result.status == RunStatus::Completed && s.c.log.test_beam > 0 && s.files.dir)
    score_test_split(s.c, *as_pair_dataset(*s.data), *s.model, s.files.dir->path, result);
  result.tokens_per_second = s.tokens_per_second;
  result.fail_on_divergence = s.c.train.fail_on_divergence;
  result.wall_seconds = seconds_since(s.t_start);
  if (s.files.dir) write_final_summary(s.files.dir->path, result, s.c, *s.model, s.scaler);
  return result;
}

// --resume of a finished run (completed or diverged): its recorded result; no file changes.
TrainResult already_finished(const TrainState& s) {
  const TrainResult done = finished_result(s.result.run_dir);
  if (!s.quiet)
    fmt::print(stderr, "[train] '{}' has already finished ({} after {} steps): nothing to do, its files are left "
               "as they are\n", done.run_dir, done.status, done.steps_done);
  return done;
}

}  // namespace

// Resolve the config, build the model, open (or restore) the run, loop { step, log, eval,
// checkpoint }, finish.
// A stop signal (train/stop_signals.h) ends the loop after a complete step; finish() then
// checkpoints and writes the summary as for any early stop, with status "interrupted".
TrainResult train(const RunConfig& given, const TrainOptions& options) {
  const StopSignalGuard stop_signals;
  TrainState s(options.comm != nullptr ? *options.comm : single_process());
  build_model_and_data(s, given, options);
  open_run(s, given, options);
  int finished = s.files.finished ? 1 : 0;
  s.comm.broadcast(&finished, sizeof finished, 0);
  if (finished != 0) return already_finished(s);
  for (int64_t step = s.start_step; step < s.end_step; ++step) {
    const auto t_step = Clock::now();
    const StepResult out = run_step(s, step);
    if (!out.divergence.empty()) {
      record_divergence(s, step, out);
      break;
    }
    after_step(s, step, out, seconds_since(t_step));
    int signal = stop_signal_received();
    s.comm.broadcast(&signal, sizeof signal, 0);  // every rank stops after the same step (rank 0's)
    if (signal != 0 && step + 1 < s.c.train.steps) {
      s.result.status = RunStatus::Interrupted;
      s.result.stop_signal = signal;
      break;
    }
  }
  return finish(s);
}

}  // namespace normlab
