// What train() is asked (TrainOptions) and what it reports (TrainResult): train/trainer.h runs a
// training, train/trainer_files.h writes its files; both read these.
#pragma once
#include <cstdint>
#include <cmath>
#include <optional>
#include <string>

#include "autograd/anomaly.h"
#include "config/run_status.h"
#include "dist/communicator.h"

namespace normlab {

struct TrainOptions {
  bool quiet = false;       // no progress output (sweeps, tests)
  std::string resume_dir;   // continue the run saved there (its config.toml is used)
  bool overwrite = false;   // a fresh run that empties a run directory holding an earlier run
  int64_t stop_after = -1;  // stop (and checkpoint) after this many steps: tests of resuming
  // A checkpoint at least this often (wall time), besides train.checkpoint_every: what a kill -9
  // can lose (train/checkpoint.h, checkpoint_due).
  double checkpoint_seconds = 600;
  Communicator* comm = nullptr;  // the processes training this model together; nullptr: this one alone
  // With resume_dir (`normlab train --resume DIR train.steps=N`): continue the run to N steps, N >
  // the train.steps it was made with (equal: a plain resume); its config.toml then says N.
  int64_t extend_to_steps = 0;
  // The same for a run that counts epochs (train.epochs > 0): `--resume DIR train.epochs=N`.
  int64_t extend_to_epochs = 0;
  // Extending a run whose schedule decays to train.steps (linear, cosine) changes the learning rate
  // of the steps to come; refused unless this is set (--allow-schedule-change).
  bool allow_schedule_change = false;
};

struct TrainResult {
  std::string run_dir;
  RunStatus status = RunStatus::Completed;  // completed | diverged | stopped | interrupted
  int stop_signal = 0;       // interrupted: the signal (SIGINT, SIGTERM)
  int64_t steps_done = 0;
  std::string reason;        // why it diverged
  std::optional<AnomalyRecord> anomaly;  // train.detect_anomaly: the first op that made inf/NaN
  double final_train_loss = 0, final_val_loss = 0, best_val_loss = 0;  // NaN if never measured
  double tokens_per_second = 0, wall_seconds = 0;
  double bleu = NAN;  // log.bleu_pairs > 0 (encoder_decoder): the final greedy corpus BLEU (rank 0)
  // log.test_beam > 0: the test split decoded from RUN/best ("best", or "last" without one), and
  // from the last weights (the same numbers when the best epoch is the last)
  double test_bleu = NAN, test_chrf = NAN, test_bleu_last = NAN, test_chrf_last = NAN;
  std::string test_bleu_signature, test_checkpoint;
  bool fail_on_divergence = false;  // the run's train.fail_on_divergence (a resumed run: its own config's)
};

}  // namespace normlab
