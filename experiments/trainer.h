// Training runs: one RunConfig in, one run directory out.
//   runs/<name>/config.toml        the resolved configuration
//   runs/<name>/tokenizer.json     the tokenizer (char vocabularies are built from the training text)
//   runs/<name>/metrics.jsonl      step, train loss, val loss (every log.eval_every), lr, grad norm, tokens/s
//   runs/<name>/grad_norms.csv     per-parameter and per-layer gradient norms (step 0 = initialization)
//                                  and the residual-stream RMS entering each layer
//   runs/<name>/summary.json       status completed | diverged (step, reason; with train.detect_anomaly
//                                  the anomaly record, experiments/trainer_anomaly.h), losses,
//                                  throughput, wall time
//   runs/<name>/checkpoint         link to the current checkpoint generation, checkpoints/step-N.XXXXXX/:
//                                  model.safetensors, optimizer.safetensors, trainer_state.json and
//                                  manifest.json (sizes, CRC-32s); crash-safe, see checkpoint.h
//   runs/<name>/fingerprint.txt    config_fingerprint of the config given (experiments/config.h)
//   runs/<name>/events.out.tfevents.*   with log.tensorboard: the two logs above as TensorBoard
//                                  scalars (experiments/tensorboard.h)
// The run holds the directory's lock (experiments/run_dir.h) from before it writes anything
// until it returns; a fresh run refuses a directory that holds an earlier run unless overwrite.
// Data parallel (experiments/data_parallel.h): with a communicator of N processes, each trains on
// its shard of every global batch (train.batch_size) and only rank 0 opens the run directory.
// A diverging run is a result: it stops cleanly with status "diverged" and keeps every metric so far.
#pragma once
#include <optional>
#include <string>

#include "autograd/anomaly.h"
#include "experiments/communicator.h"
#include "experiments/run_config.h"
#include "experiments/run_status.h"

namespace normlab {

struct TrainOptions {
  bool quiet = false;       // no progress output (sweeps, tests)
  std::string resume_dir;   // continue the run saved there (its config.toml is used)
  bool overwrite = false;   // a fresh run that empties a run directory holding an earlier run
  int64_t stop_after = -1;  // stop (and checkpoint) after this many steps: tests of resuming
  Communicator* comm = nullptr;  // the processes training this model together; nullptr: this one alone
};

struct TrainResult {
  std::string run_dir;
  RunStatus status = RunStatus::Completed;  // completed | diverged | stopped
  int64_t steps_done = 0;
  std::string reason;        // why it diverged
  std::optional<AnomalyRecord> anomaly;  // train.detect_anomaly: the first op that made inf/NaN
  double final_train_loss = 0, final_val_loss = 0, best_val_loss = 0;  // NaN if never measured
  double tokens_per_second = 0, wall_seconds = 0;
  bool fail_on_divergence = false;  // the run's train.fail_on_divergence (a resumed run: its own config's)
};

TrainResult train(const RunConfig& config, const TrainOptions& options = {});

}  // namespace normlab
