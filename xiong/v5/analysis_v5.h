// Xiong v5's analysis: the registered claims (xiong/registration_v5.toml) decided from the committed
// record (xiong/v5/record_v5.h), by the rules the registration states.
//
// Which rows count: a run is confirmatory only when its arm is registered, its seed is a
// confirmatory seed, its commit is the frozen build's (record/frozen_build.json) and it started
// after the registration's commit (registered_utc); any other row is refused, with its reason, and
// never mixed in. A diverged run scores the registration's diverged_bleu and has not reached the
// threshold (counted epochs + 1).
//
// Per claim, the per-seed numbers (paired by seed: reference - compared; init_slope: the arm's
// slope of ln ||mean gradient|| over the layer index) and, by its decision rule:
//   minimum_effect   p = P(T >= (mean - sesoi) / se), t with n - 1 df; reproduced when Holm's p
//                    < alpha, contradicted when the one-sided 95% upper bound < sesoi
//   non_inferiority  the same with -sesoi in place of sesoi
//   equivalence      TOST: reproduced when the 90% interval lies in [low, high], contradicted when
//                    the 95% interval lies wholly outside, p = the larger one-sided p
// A claim with fewer seeds than registered is "incomplete" (its numbers shown, no verdict).
// Beside it: the sign-flip test, the median, and (test_bleu) the same rule on the last weights and
// the paired bootstrap of BLEU over the test sentences pooled over seeds (1000 resamples, seed 12345).
#pragma once
#include <filesystem>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "xiong/v5/registration_v5.h"

namespace normlab::xiong {

struct RecordRunV5 {
  std::string run, arm, status, started_utc, finished_utc, commit, code_crc32, cpu;
  int seed = 0;
  double test_bleu = 0, test_bleu_last = 0;
  int64_t epochs_done = 0, best_epoch = 0;
  std::string refused;  // why the row is not confirmatory ("" when it is)
};
struct CurvePointV5 {
  int64_t epoch = 0;
  double val_loss = 0, val_bleu = 0;
};
struct InitRowV5 {
  std::string arm, stack, weight;
  int seed = 0, layer = 0;
  double norm_of_mean = 0;
};
struct RecordV5 {
  std::filesystem::path dir;  // where it was read from (hypotheses/<run>.txt, test_references.tsv)
  std::vector<RecordRunV5> runs;
  std::map<std::string, std::vector<CurvePointV5>> curves;  // by run name, epoch order
  std::vector<InitRowV5> init;
  std::string frozen_commit;
};

// Reads record_dir (runs.csv, val_curves.csv, init_profile.csv when present, frozen_build.json);
// throws naming the file, the line and the column of a damaged cell.
RecordV5 read_record_v5(const std::filesystem::path& record_dir);

// Marks each run's `refused` (see above); registered_utc as "2026-12-06T03:40:00Z".
void classify_runs(const RegistrationV5& reg, const std::string& registered_utc, RecordV5& record);

struct ClaimResultV5 {
  const ClaimV5* claim = nullptr;
  std::vector<int> seeds;               // the seeds with a number, in registration order
  std::vector<double> values;           // per seed: reference - compared (init_slope: the slope)
  std::vector<double> values_last;      // test_bleu: the same from the last weights
  double estimate = 0, low95 = 0, high95 = 0, low90 = 0, high90 = 0, p = 0, p_holm = 0;
  double sign_flip_p = 0, median = 0;
  // test_bleu: the paired bootstrap of corpus BLEU over the test sentences of every seed with both
  // arms' translations in the record (a diverged run has none), reference - compared; NaN without them.
  double pooled_difference = NAN, pooled_low = NAN, pooled_high = NAN;
  std::string verdict, verdict_last;    // reproduced | contradicted | inconclusive | incomplete
};

// Decides every claim from the confirmatory rows (classify_runs first); Holm within each family.
std::vector<ClaimResultV5> analyse_v5(const RegistrationV5& reg, const RecordV5& record);

// The per-seed number of one run for a quantity ("epochs_to_threshold": the first epoch whose
// validation BLEU reaches the threshold, epochs + 1 when none does or the run diverged).
double epochs_to_threshold(const RegistrationV5& reg, const RecordRunV5& run, const std::vector<CurvePointV5>& curve);

}  // namespace normlab::xiong
