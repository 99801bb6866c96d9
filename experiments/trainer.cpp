#include "experiments/trainer.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>

#include "autograd/tape.h"
#include "core/backend.h"
#include "core/ops.h"
#include "experiments/atomic_file.h"
#include "experiments/checkpoint.h"
#include "experiments/config.h"
#include "experiments/data_parallel.h"
#include "experiments/fault_injection.h"
#include "experiments/grad_stats.h"
#include "experiments/memory_estimate.h"
#include "experiments/run_dir.h"
#include "experiments/tensorboard.h"
#include "nn/transformer.h"
#include "optim/schedule.h"

namespace fs = std::filesystem;

namespace normlab {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Mean loss over log.eval_batches validation batches drawn from a generator of their own, so that
// evaluating never changes the training data stream. Each rank evaluates its shard of every batch.
double validation_loss(TransformerLM& model, const Dataset& data, const RunConfig& c, Communicator& comm) {
  NoGradGuard no_grad;
  model.eval();
  Generator gen(c.train.seed * 1000003ull + 7919ull);
  double total = 0.0;
  for (int64_t i = 0; i < c.log.eval_batches; ++i) {
    const Batch b = shard_of(data.sample(true, c.train.batch_size, c.train.context, gen), comm);
    total += global_mean(model.loss(b.inputs, b.targets).item(), counted_tokens(b), comm);
  }
  model.train();
  return total / static_cast<double>(std::max<int64_t>(c.log.eval_batches, 1));
}

// The MoE load-balancing loss of the forward just run (unscaled), read without recording anything.
double router_aux_value(const TransformerLM& model) {
  NoGradGuard no_grad;
  return model.router_aux_loss().item();
}

// Rank 0 keeps the seed a single process uses, so its shard's dropout masks are the single
// process's first rows; other ranks draw masks of their own (dropout > 0 is not equal to one
// process, see data_parallel.h).
uint64_t dropout_seed(const RunConfig& c, int64_t step, int rank) {
  const uint64_t seed = c.train.seed * 7777777ull + static_cast<uint64_t>(step);
  return rank == 0 ? seed : seed ^ (0x9E3779B97F4A7C15ull * static_cast<uint64_t>(rank));
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

// Rank 0's share of a run: the locked run directory and its log writers. Other ranks never open
// (or lock) the directory; they only read config.toml when resuming.
struct RunFiles {
  std::optional<RunDir> dir;
  std::optional<MetricsWriter> metrics;
  std::optional<GradNormWriter> grad_log;
  std::optional<TensorBoardWriter> events;  // log.tensorboard: the same numbers as TensorBoard scalars
};

// A metrics.jsonl record, and the same numbers as TensorBoard scalars when they are on (rank 0 only).
void log_metrics(RunFiles& files, const nlohmann::json& record) {
  if (files.metrics) files.metrics->write(record);
  if (files.events) files.events->write_metrics(record);
}

// Locks the run directory, writes a fresh run's config files or restores a resumed run's
// checkpoint (checked before anything changes), then opens the logs; returns the first step.
int64_t open_run_files(RunFiles& files, const RunConfig& c, const RunConfig& given, const TrainOptions& options,
                       const Dataset& data, TransformerLM& model, Optimizer& optimizer, Generator& data_gen) {
  const bool resuming = !options.resume_dir.empty();
  const fs::path resume_path = fs::path(options.resume_dir).lexically_normal();
  files.dir.emplace(resuming ? prepare_run_dir(resume_path.parent_path().string(), resume_path.filename().string(), RunDirMode::resume)
                             : prepare_run_dir(c.train.out_dir, c.train.name, options.overwrite ? RunDirMode::overwrite : RunDirMode::fresh));
  const fs::path& dir = files.dir->path;
  int64_t start_step = 0;
  std::optional<int64_t> keep_logs_through;  // a resumed run drops what was logged after its checkpoint
  if (!resuming) {
    write_file_atomic((dir / run_files::kConfig).string(), config_to_toml(c));
    write_file_atomic((dir / run_files::kFingerprint).string(), config_fingerprint(given) + "\n");
    if (data.tokenizer()) write_file_atomic((dir / "tokenizer.json").string(), data.tokenizer()->to_json());
  } else {
    // load_checkpoint checks every file before it changes anything; only a checkpoint that
    // passed may cut the logs back to its step (below) and drop the summary.
    start_step = load_checkpoint(dir.string(), model, optimizer, data_gen);
    keep_logs_through = start_step - 1;
    fs::remove(dir / run_files::kSummary);
  }
  remove_stale_checkpoint_files(dir.string());  // what a killed or failed writer left behind
  files.metrics.emplace(dir / run_files::kMetrics, keep_logs_through);
  files.grad_log.emplace(dir / run_files::kGradNorms, keep_logs_through);
  if (c.log.tensorboard) files.events.emplace(dir, keep_logs_through);
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

// Why the step diverged ("" if it did not): NaN/Inf anywhere, or a loss above train.divergence_loss.
std::string divergence_reason(double loss_value, double grad_norm, const RunConfig& c) {
  if (!std::isfinite(loss_value)) return fmt::format("loss is {}", loss_value);
  if (loss_value > c.train.divergence_loss)
    return fmt::format("loss {:.4g} exceeds train.divergence_loss {:.4g}", loss_value, c.train.divergence_loss);
  if (!std::isfinite(grad_norm)) return fmt::format("gradient norm is {}", grad_norm);
  return "";
}

void write_final_summary(const fs::path& dir, const TrainResult& result, const RunConfig& c, const TransformerLM& model) {
  nlohmann::json summary = {{"status", result.status},
                            {"steps_done", result.steps_done},
                            {"steps", c.train.steps},
                            {"final_train_loss", result.final_train_loss},
                            {"final_val_loss", result.final_val_loss},
                            {"best_val_loss", result.best_val_loss},
                            {"tokens_per_s", result.tokens_per_second},
                            {"wall_s", result.wall_seconds},
                            {"parameters", model.parameter_count()}};
  if (result.status == "diverged") {
    summary["diverged_at_step"] = result.steps_done;
    summary["reason"] = result.reason;
  }
  write_summary(dir, summary);
}

// The checkpoint of `step`: every rank checks that it holds rank 0's weights, rank 0 saves.
void checkpoint(RunFiles& files, const TransformerLM& model, const Optimizer& optimizer, const Generator& data_gen,
                int64_t step, Communicator& comm) {
  check_replicas_agree(model, step, comm);
  if (files.dir) save_checkpoint(files.dir->path.string(), model, optimizer, data_gen, step);
}

}  // namespace

TrainResult train(const RunConfig& given, const TrainOptions& options) {
  const auto t_start = Clock::now();
  Communicator& comm = options.comm != nullptr ? *options.comm : single_process();
  const bool quiet = options.quiet || !comm.is_root();
  RunConfig c = options.resume_dir.empty()
                    ? given
                    : load_config((fs::path(options.resume_dir) / "config.toml").string(), {});
  set_num_threads(c.train.threads);
  check_batch_divides(c.train.batch_size, comm);
  NL_CHECK(comm.size() == 1 || c.train.device.kind == DeviceKind::CPU, "train",
           "train.device = '{}': data-parallel training over MPI runs on the CPU (NCCL is not built)",
           c.train.device.str());

  std::unique_ptr<Dataset> data = make_dataset(c.data);
  c.model.vocab_size = data->vocab_size();
  const int64_t tokens_per_step = checked_mul(c.train.batch_size, c.train.context, "train",
                                             "train.batch_size * train.context");
  check_training_memory(c, quiet);  // before anything big is allocated
  TransformerLM model(c.model);
  // train.device: the model is built (and initialised) on the host, then moved; batches follow it.
  const Device device = c.train.device;
  model.to(device);
  auto optimizer = make_optimizer(c.optim, model.named_parameters());
  Generator data_gen(c.train.seed);

  TrainResult result;
  const bool resuming = !options.resume_dir.empty();
  result.run_dir = resuming ? fs::path(options.resume_dir).lexically_normal().string()
                            : (fs::path(c.train.out_dir) / c.train.name).string();
  RunFiles files;
  int64_t start_step = 0;
  if (comm.is_root()) start_step = open_run_files(files, c, given, options, *data, model, *optimizer, data_gen);
  // Every rank starts from rank 0's weights, optimizer state, data stream and step.
  start_step = copy_from_root(model, *optimizer, data_gen, start_step, comm);

  const bool tty = !quiet && isatty(STDERR_FILENO);
  const int64_t end_step = options.stop_after >= 0 ? std::min(c.train.steps, start_step + options.stop_after)
                                                   : c.train.steps;
  result.status = "completed";
  // Never measured stays NaN (null in summary.json): a run that diverged before its first
  // evaluation has no validation loss, and 0 would read as the best one of a sweep.
  result.final_train_loss = result.final_val_loss = NAN;
  result.best_val_loss = INFINITY;
  result.steps_done = start_step;  // a resumed run with nothing left to do stays complete
  if (resuming && files.dir) read_earlier_losses(files.dir->path, result);
  const bool moe = c.model.ffn_type == FfnType::Moe;
  double tokens_per_second = 0.0, train_seconds = 0.0;
  int64_t timed_steps = 0;

  for (int64_t step = start_step; step < end_step; ++step) {
    const auto t_step = Clock::now();
    inject_rank_fault(comm.rank(), step);
    model.set_dropout_seed(dropout_seed(c, step, comm.rank()));
    // Every rank draws the whole global batch (the same stream) and trains on its shard of rows.
    Batch batch = shard_of(data->sample(false, c.train.batch_size, c.train.context, data_gen), comm);
    const int64_t counted = counted_tokens(batch);
    batch.inputs = batch.inputs.to(device);
    batch.targets = batch.targets.to(device);
    // Cross-entropy, plus router_aux_loss_coef times the MoE load-balancing loss when that is on
    // (each rank's own tokens' balance: under MPI not equal to one process's, see data_parallel.h).
    Var loss = model.training_loss(batch.inputs, batch.targets);
    const double loss_value = global_mean(loss.item(), counted, comm);
    const double router_aux = moe ? global_mean(router_aux_value(model), counted, comm) : NAN;
    backward(loss);
    allreduce_gradients(model, counted, comm);  // from here on every rank holds the global gradient
    const auto params = model.named_parameters();

    // Gradient norms: at step 0 (initialization, before any update) and every grad_norm_every steps.
    if (step == 0 || (c.log.grad_norm_every > 0 && step % c.log.grad_norm_every == 0))
      log_grad_norms(files, model, step, step == start_step && !quiet, comm);

    std::vector<Var> plain;
    for (const auto& p : params) plain.push_back(p.second);
    const double grad_norm = clip_grad_norm(plain, c.optim.grad_clip);
    const double lr = learning_rate(c.schedule, c.optim.lr, step, c.train.steps);

    // Divergence is a result: record where and why, keep everything logged so far. Every rank
    // decides alike: the loss and the gradients it looks at are the all-reduced ones.
    const std::string reason = divergence_reason(loss_value, grad_norm, c);
    if (!reason.empty()) {
      result.status = "diverged";
      result.reason = reason;
      result.steps_done = step;
      log_metrics(files, {{"step", step}, {"train_loss", std::isfinite(loss_value) ? nlohmann::json(loss_value) : nlohmann::json(nullptr)},
                          {"lr", lr}, {"diverged", reason}});
      break;
    }
    {
      NoGradGuard no_grad;
      optimizer->step(lr);
    }
    optimizer->zero_grad();
    result.final_train_loss = loss_value;
    result.steps_done = step + 1;

    const double dt = seconds_since(t_step);
    if (step > start_step) {  // the first step pays one-time allocation costs
      train_seconds += dt;
      ++timed_steps;
    }
    tokens_per_second = timed_steps > 0 ? static_cast<double>(tokens_per_step) * static_cast<double>(timed_steps) / train_seconds
                                        : static_cast<double>(tokens_per_step) / dt;
    const bool last = step + 1 == c.train.steps;
    nlohmann::json row = {{"step", step}, {"train_loss", loss_value}, {"lr", lr},
                          {"grad_norm", grad_norm}, {"tokens_per_s", tokens_per_second}};
    if (moe) row["router_aux_loss"] = router_aux;
    if ((c.log.eval_every > 0 && (step + 1) % c.log.eval_every == 0) || last) {
      const double val = validation_loss(model, *data, c, comm);
      row["val_loss"] = val;
      result.final_val_loss = val;
      result.best_val_loss = std::min(result.best_val_loss, val);
    }
    if (step % std::max<int64_t>(c.log.every, 1) == 0 || last || row.contains("val_loss")) log_metrics(files, row);
    if (!quiet && (tty || step % std::max<int64_t>(c.log.every * 10, 1) == 0 || last))
      print_progress(tty, step + 1, c.train.steps, loss_value, lr, tokens_per_second, seconds_since(t_start));
    if (c.train.checkpoint_every > 0 && (step + 1) % c.train.checkpoint_every == 0 && !last)
      checkpoint(files, model, *optimizer, data_gen, step + 1, comm);
  }
  if (tty) fmt::print(stderr, "\n");
  if (result.status == "completed" && result.steps_done < c.train.steps) result.status = "stopped";
  if (result.status != "diverged") checkpoint(files, model, *optimizer, data_gen, result.steps_done, comm);
  if (std::isinf(result.best_val_loss)) result.best_val_loss = NAN;  // no evaluation happened

  result.tokens_per_second = tokens_per_second;
  result.wall_seconds = seconds_since(t_start);
  if (files.dir) write_final_summary(files.dir->path, result, c, model);
  return result;
}

}  // namespace normlab
