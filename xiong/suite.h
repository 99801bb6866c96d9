// `normlab reproduce xiong`: runs the experiment suite (init-time probes in this process, training
// runs as resumable sweeps) and writes DIR/report.md with figures under DIR/figures/.
#pragma once
#include <set>
#include <string>

namespace normlab::xiong {

struct SuiteOptions {
  bool quick = false;
  int jobs = 1;
  std::string out_dir;           // "" = runs/xiong (full) or runs/xiong-quick
  std::set<std::string> only;    // {"E1", "E3"}; empty = all
  std::string config_dir;        // "" = xiong/configs found from the working directory or the binary
  std::string normlab_binary;    // "" = this executable (the sweeps' child processes)
  bool quiet = false;
  // Protocol v4: train the registered confirmatory runs (xiong/registration.toml) of the claims in
  // `only` (every registered training claim when empty) into out_dir (default runs/xiong-v4), and
  // write out_dir/confirmatory.md: each claim's run counts and the registered analysis
  // (xiong/registered_analysis.h) of the runs there.
  bool confirmatory = false;
  // Train nothing. With confirmatory: analyse the runs already in out_dir (while a suite trains
  // them, or after), reading the configs from the source tree, taking no lock and copying nothing.
  // Without it, record_dir is required.
  bool analyse_only = false;
  // The runs' record in the repository (a folder written by scripts/export_val_curves.py:
  // run_record.h). With analyse_only the runs are read from it instead of from run directories:
  // confirmatory, with the init probes' init_probes.json beside it, out_dir receiving only
  // confirmatory.md and the probes' cache; otherwise the selected experiments' report is written
  // to out_dir (default runs/xiong-record) as a suite run would write it. Without analyse_only
  // (not confirmatory) the suite takes the runs the record holds and trains only the others.
  std::string record_dir;
};

// The directory holding the suite's TOML files: options.config_dir if given, else the first of
// ./xiong/configs, <binary dir>/../xiong/configs, <binary dir>/../../xiong/configs that
// has theorem1.toml. Throws naming the places searched.
std::string find_config_dir(const std::string& given);

// Runs the suite and returns the path of the report.
std::string run_xiong_suite(const SuiteOptions& options);

}  // namespace normlab::xiong
