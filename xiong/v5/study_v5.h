// Xiong v5's runs (`normlab reproduce xiong-v5`): the registered arms (xiong/registration_v5.toml) on
// the confirmatory seeds, and the init-time probe of E2, by one frozen build.
//
// The training runs are one sweep (sweep/sweep.h) in OUT: a point per (seed, arm), seed-major, named
// "<arm>,seed=<seed>", each an ordinary run directory; rerunning skips finished runs and resumes
// interrupted ones (by config fingerprint), so the study runs in pieces across sittings.
// The frozen build: the first confirmatory invocation writes OUT/frozen_build.json (this binary's
// commit and CRC-32); every later one must be the same binary, or it refuses to run.
// The init probe writes OUT/init_profile.csv: arm, seed, stack, weight, layer, norm_of_mean.
// The record (`--record DIR`, written after the runs, or alone with --record-only) holds what the
// analysis reads, each file rewritten atomically: runs.csv (one row per finished run, with its
// provenance), val_curves.csv (each run's per-epoch validation), init_profile.csv, and
// hypotheses/<run>.txt (each run's test translations from the scored checkpoint).
#pragma once
#include <string>
#include <vector>

#include "xiong/v5/registration_v5.h"

namespace normlab::xiong {

struct StudyV5Options {
  std::string registration = "xiong/registration_v5.toml";  // base_config is relative to its folder's parent
  std::string out_dir;             // "" = runs/xiong-v5 (runs/xiong-v5-quick with quick)
  bool quick = false;              // one pilot seed, the registration's quick overrides, never confirmatory
  bool exploratory = false;        // the exploratory arms (after the confirmatory grid) instead
  std::vector<std::string> only;   // arm ids (default: every arm of the role)
  int seeds = 0;                   // 0 = the registration's training_seeds()
  int jobs = 2;                    // runs at a time, one thread each
  bool skip_init_probe = false;
  bool record_only = false;        // write the record from OUT's runs; train nothing
  std::string record_dir;          // "" = no record
  bool quiet = false;
  std::string normlab_binary;      // the runs' binary; "" = this process's own executable (tests name the CLI)
};

// Runs the study (or only writes its record). Throws normlab::Error naming what is wrong: an
// unknown arm, another build than the frozen one, a registration that does not load.
void run_study_v5(const StudyV5Options& options);

// One (arm, seed) of the training grid, in run order (seed-major).
struct StudyPointV5 {
  const ArmV5* arm;
  int seed;
  std::string name;  // "<arm>,seed=<seed>"
};
std::vector<StudyPointV5> study_points(const std::vector<const ArmV5*>& arms, const std::vector<int>& seeds);

}  // namespace normlab::xiong
