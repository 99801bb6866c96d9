// Training runs: one RunConfig in, one run directory out.
//   runs/<name>/config.toml        the resolved configuration
//   runs/<name>/tokenizer.json     the tokenizer (char vocabularies are built from the training text)
//   runs/<name>/sentencepiece.model  data.tokenizer = "sentencepiece": the trained model that
//                                  tokenizer.json names (data/sentencepiece.h); resume and sample load it
//   runs/<name>/metrics.jsonl      step, train loss, val loss (every log.eval_every), lr, grad norm, tokens/s
//   runs/<name>/grad_norms.csv     per-parameter and per-layer gradient norms (step 1 = the gradient at initialization,
//                                  every log.grad_norm_every steps and the last step)
//                                  and the residual-stream RMS entering each layer
//   runs/<name>/summary.json       status completed | diverged (step, reason; with train.detect_anomaly
//                                  the anomaly record, train/trainer_anomaly.h), losses,
//                                  throughput, wall time
//   runs/<name>/checkpoint         link to the current checkpoint generation, checkpoints/step-N.XXXXXX/:
//                                  model.safetensors, optimizer.safetensors, trainer_state.json and
//                                  manifest.json (sizes, CRC-32s); crash-safe, see checkpoint.h
//   runs/<name>/fingerprint.txt    config_fingerprint of the config given (config/config.h)
//   runs/<name>/events.out.tfevents.*   with log.tensorboard: the two logs above as TensorBoard
//                                  scalars (train/tensorboard.h)
// The run holds the directory's lock (train/run_dir.h) from before it writes anything
// until it returns; a fresh run refuses a directory that holds an earlier run unless overwrite.
// Data parallel (dist/data_parallel.h): with a communicator of N processes, each trains on
// its shard of every global batch (train.batch_size) and only rank 0 opens the run directory.
// A diverging run is a result: it stops cleanly with status "diverged" and keeps every metric so far.
#pragma once
#include "config/run_config.h"
#include "train/run_result.h"

namespace normlab {

TrainResult train(const RunConfig& config, const TrainOptions& options = {});

}  // namespace normlab
