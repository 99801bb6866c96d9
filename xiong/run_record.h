// The confirmatory runs read back from their record in the repository (docs/xiong/data/v4/,
// written by scripts/export_val_curves.py) instead of from the run directories, so that the
// registered analysis can be redone from a clean checkout after the runs themselves are gone
// (docs/xiong/data/v4-e4 is E4's exploratory grid, read the same way by any experiment's analysis
// through Context::record_dir; a suite that trains takes the recorded runs from there and trains
// only the others, so a grid resumes on another machine from its committed record):
//   val_curves.csv       task, run, step, lr, val_loss: one row per evaluation
//   val_curves_runs.csv  task, run, status, steps_done, final_val_loss [, initial_loss,
//                        diverged_at_step, fingerprint]: one row per finished run
// Every row of val_curves_runs.csv carries the fingerprint of its config, unless the record says
// why it cannot in legacy.txt (kRecordLegacy: v4's record was exported before the exporter wrote
// fingerprints): a row without one in a record without that file is an error naming file and line.
// A registered run absent from the record is "missing". The record holds validation curves only,
// so the suite's divergence rule sees the validation losses, not the training ones; a run the
// record lists as diverged needs its initial_loss (the loss it then counts as).
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "xiong/confirmatory.h"

namespace normlab::xiong {

inline constexpr const char* kRecordCurves = "val_curves.csv";
inline constexpr const char* kRecordRuns = "val_curves_runs.csv";
inline constexpr const char* kRecordLegacy = "legacy.txt";
// The init probes' cache file (DIR/cache/v4_init_probes.json), kept beside the curves.
inline constexpr const char* kRecordInitProbes = "init_probes.json";

// The points' runs of one task (a sweep folder's name: "copy", "text", "e9", ...) as the record in
// `record_dir` holds them. A point absent from the record is "missing", and so is one whose
// recorded fingerprint (an optional column) differs from fingerprint_of(point): a run made with
// another config. No divergence rule is applied here. Throws naming the file and line of a
// malformed row.
TrainingResults read_training_record(const std::filesystem::path& record_dir, const std::string& task,
                                     const std::vector<TrainPoint>& points,
                                     const std::function<std::string(const TrainPoint&)>& fingerprint_of);

// Every registered training claim's runs as the record in `record_dir` holds them, with the
// divergence rule applied. Throws naming the file and line of a malformed row. The record's init
// probes, if it has them, are copied to ctx.out_dir/cache/v4_init_probes.json, where the analysis
// looks (measure_init_probes checks their key: probes of another design are measured afresh).
ConfirmatoryRuns read_confirmatory_record(const Context& ctx, const Registration& reg,
                                          const std::filesystem::path& record_dir);

}  // namespace normlab::xiong
