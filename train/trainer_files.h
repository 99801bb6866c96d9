// The trainer's run files (rank 0): the locked run directory, metrics.jsonl, grad_norms.csv,
// dynamics.csv and the TensorBoard events; opening a fresh or resumed run, the logs written each step, checkpoints and
// summary.json. Used by train/trainer.cpp only.
#pragma once
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/random.h"
#include "dist/communicator.h"
#include "config/run_config.h"
#include "train/dynamics.h"
#include "train/run_dir.h"
#include "train/tensorboard.h"
#include "train/run_result.h"
#include "nn/transformer.h"
#include "optim/loss_scaler.h"
#include "optim/optimizer.h"
#include "data/seq2seq.h"

namespace normlab::training {

// Rank 0's share of a run: the locked run directory and its log writers. Other ranks never open
// (or lock) the directory; they only read config.toml when resuming.
struct RunFiles {
  std::optional<RunDir> dir;
  std::optional<MetricsWriter> metrics;
  std::optional<GradNormWriter> grad_log;
  std::optional<TensorBoardWriter> events;  // log.tensorboard: the same numbers as TensorBoard scalars
  std::optional<DynamicsLog> dynamics;       // log.dynamics_steps > 0: dynamics.csv
  bool finished = false;  // --resume of a finished run: locked and checked, nothing opened or changed
  bool extending = false;  // --resume DIR train.steps=N: config.toml and fingerprint.txt say N from now on
};

// --resume DIR train.steps=N (train.epochs=N for a run that counts epochs): checks that the run in
// `dir`, made with config `c`, can go on to N steps or epochs (N > its own; not diverged; a
// schedule that decays to train.steps only with allow_schedule_change) and sets c.train.steps (or
// c.train.epochs) = N, saying so on stderr unless quiet. Returns false (and changes nothing) without
// an extension or when N is the run's own length. Throws "[train] override 'train.steps=N': ..."
// (or 'train.epochs=N'), also for the unit the run does not count.
bool extend_run_config(RunConfig& c, const std::filesystem::path& dir, const TrainOptions& options, bool quiet);

// A metrics.jsonl record, and the same numbers as TensorBoard scalars when they are on (rank 0 only).
void log_metrics(RunFiles& files, const nlohmann::json& record);
// Locks the run directory, writes a fresh run's config files or restores a resumed run's
// checkpoint (checked before anything changes), then opens the logs; returns the first step.
int64_t open_run_files(RunFiles& files, const RunConfig& c, const RunConfig& given, const TrainOptions& options,
                       const Dataset& data, TransformerLM& model, Optimizer& optimizer, Generator& data_gen,
                       LossScaler& scaler);
// A resumed run's summary covers the whole run: the losses logged before its checkpoint count.
void read_earlier_losses(const std::filesystem::path& dir, TrainResult& result);
// A finished run's result as its summary.json and config.toml record it: what --resume of a
// completed or diverged run returns, without opening (or changing) anything in it.
TrainResult finished_result(const std::filesystem::path& dir);
// Gradient norms (all-reduced gradients) and the residual-stream RMS over the global batch; every
// rank computes them (a collective), rank 0 writes them.
void log_grad_norms(RunFiles& files, const TransformerLM& model, int64_t step, bool warn, Communicator& comm);
// log.test_beam: decodes the test split by beam search (log.test_beam, log.test_length_penalty) with
// the last weights (RUN/test_hypotheses_last.txt, result.test_bleu_last) and then with RUN/best
// loaded into `model` (RUN/test_hypotheses.txt, result.test_bleu; the last weights' translations
// when best is the last step or the run has none), saying both on stderr. result.steps_done must be set.
void score_test_split(const RunConfig& c, const PairDataset& pairs, TransformerLM& model,
                      const std::filesystem::path& dir, TrainResult& result);

void write_final_summary(const std::filesystem::path& dir, const TrainResult& result, const RunConfig& c,
                         const TransformerLM& model, const LossScaler& scaler);
// The checkpoint of `step`: every rank checks that it holds rank 0's weights, rank 0 saves.
void checkpoint(RunFiles& files, const TransformerLM& model, const Optimizer& optimizer, const Generator& data_gen,
                const LossScaler& scaler, int64_t step, Communicator& comm);

}  // namespace normlab::training
