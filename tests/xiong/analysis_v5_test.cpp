// Xiong v5's analysis (xiong/v5/analysis_v5.h) on made-up records: only rows of the frozen build
// that started after the registration count; a diverged run scores the registered BLEU; each
// decision rule gives the verdict its interval implies; a claim short of seeds has no verdict.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.h"
#include "data/bleu.h"
#include "stats/stats.h"
#include "xiong/v5/analysis_v5.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace normlab::xiong {
namespace {

const std::string kRegistration = std::string(NORMLAB_SOURCE_DIR) + "/xiong/registration_v5.toml";
constexpr const char* kRegistered = "2026-12-06T04:00:00Z";
constexpr const char* kFrozen = "abcdef123456";

struct MadeUpRun {
  std::string arm;
  int seed;
  double bleu, bleu_last;
  std::string status = "completed", commit = kFrozen, started = "2026-12-06T05:00:00Z";
  std::vector<double> val_bleu = {};  // per epoch
};

// A record folder holding `runs` (runs.csv, val_curves.csv, frozen_build.json).
void write_record(const test::ScratchDir& dir, const std::vector<MadeUpRun>& runs) {
  std::string csv = "run,arm,seed,status,test_bleu,test_bleu_last,epochs_done,best_epoch,started_utc,finished_utc,"
                    "commit,code_crc32,cpu\n";
  std::string curves = "run,arm,seed,epoch,val_loss,val_bleu\n";
  for (const MadeUpRun& r : runs) {
    const std::string name = fmt::format("\"{},seed={}\"", r.arm, r.seed);
    const bool diverged = r.status == "diverged";
    csv += fmt::format("{},{},{},{},{},{},10,9,{},2026-12-06T06:00:00Z,{},0000abcd,Test CPU\n", name, r.arm, r.seed,
                       r.status, diverged ? "" : fmt::format("{}", r.bleu), diverged ? "" : fmt::format("{}", r.bleu_last),
                       r.started, r.commit);
    for (size_t e = 0; e < r.val_bleu.size(); ++e)
      curves += fmt::format("{},{},{},{},3.0,{}\n", name, r.arm, r.seed, e + 1, r.val_bleu[e]);
  }
  dir.write("runs.csv", csv);
  dir.write("val_curves.csv", curves);
  dir.write("frozen_build.json", fmt::format("{{\"commit\": \"{}\", \"code_crc32\": \"0000abcd\"}}\n", kFrozen));
}

const ClaimResultV5& result_of(const std::vector<ClaimResultV5>& results, const std::string& id) {
  for (const ClaimResultV5& r : results)
    if (r.claim->id == id) return r;
  throw Error("no result for " + id);
}

TEST(AnalysisV5, OnlyFrozenRowsAfterTheRegistrationCountAndADivergedRunScoresZero) {
  const RegistrationV5 reg = load_registration_v5(kRegistration);
  std::vector<MadeUpRun> runs;
  const std::vector<double> long_warmup = {31, 33, 30, 32, 34}, none = {5, 9, 4, 7, 3};
  for (int i = 0; i < 5; ++i) {
    runs.push_back({"post-w1432-1e-3", 2001 + i, long_warmup[i], long_warmup[i] - 1});
    runs.push_back({"post-w1-1e-3", 2001 + i, none[i], none[i]});
  }
  runs[5].status = "diverged";  // post-w1-1e-3, seed 2003: counts 0 BLEU, not its none[2]
  // Rows that must not count: another build, a start before the registration, a pilot seed.
  runs.push_back({"post-w1-1e-3", 2004, 99, 99, "completed", "000000000000"});
  runs.push_back({"post-w1-1e-3", 2005, 99, 99, "completed", kFrozen, "2026-12-06T03:59:59Z"});
  runs.push_back({"post-w1-1e-3", 2, 99, 99});
  test::ScratchDir dir;
  write_record(dir, runs);
  RecordV5 record = read_record_v5(dir.path());
  classify_runs(reg, kRegistered, record);
  int refused = 0;
  for (const RecordRunV5& r : record.runs) refused += !r.refused.empty();
  EXPECT_EQ(refused, 3);
  // The later rows for seeds 2004 and 2005 are refused, so the seeds' first rows stand.
  const std::vector<ClaimResultV5> results = analyse_v5(reg, record);
  const ClaimResultV5& w = result_of(results, "W1@1e-3");
  ASSERT_EQ(w.values.size(), 5u);
  double sum = 0;
  for (int i = 0; i < 5; ++i) sum += long_warmup[i] - (i == 2 ? 0.0 : none[i]);
  EXPECT_NEAR(w.estimate, sum / 5, 1e-12);
  EXPECT_EQ(w.verdict, "reproduced");
  // p below alpha exactly when the one-sided 95% lower bound (the 90% interval's low end) clears
  // the smallest effect: two computations of one test (incomplete beta, bisection) agree.
  EXPECT_EQ(w.p < 0.05, w.low90 > 2.0);
  // The last weights: the reference arm one BLEU lower at every seed.
  ASSERT_EQ(w.values_last.size(), 5u);
  EXPECT_NEAR(w.values_last[0], w.values[0] - 1, 1e-12);
  // Claims without their arms' runs have no numbers and no verdict.
  EXPECT_EQ(result_of(results, "PreNI").verdict, "incomplete");
  EXPECT_TRUE(result_of(results, "PreNI").values.empty());
}

TEST(AnalysisV5, EachRuleGivesTheVerdictItsIntervalImplies) {
  const RegistrationV5 reg = load_registration_v5(kRegistration);
  // PreNI (non-inferiority, margin 1): Pre-LN 0.1-0.5 BLEU below Post-LN: inside the margin.
  // W1@5e-4 (minimum effect 2): differences near 0.5, tight: contradicted (upper bound below 2).
  // W179@1e-3: differences 1-5, wide: inconclusive.
  std::vector<MadeUpRun> runs;
  const std::vector<double> ni = {-0.1, -0.5, -0.2, -0.3, -0.4}, small = {0.4, 0.6, 0.5, 0.55, 0.45},
                            wide = {1, 5, 2, 4, 3};
  for (int i = 0; i < 5; ++i) {
    const int seed = 2001 + i;
    runs.push_back({"post-w1432-5e-4", seed, 30, 30});
    runs.push_back({"pre-sec4", seed, 30 + ni[i], 30 + ni[i]});
    runs.push_back({"post-w1-5e-4", seed, 30 - small[i], 30 - small[i]});
    runs.push_back({"post-w1432-1e-3", seed, 30, 30});
    runs.push_back({"post-w179-1e-3", seed, 30 - wide[i], 30 - wide[i]});
  }
  test::ScratchDir dir;
  write_record(dir, runs);
  RecordV5 record = read_record_v5(dir.path());
  classify_runs(reg, kRegistered, record);
  const std::vector<ClaimResultV5> results = analyse_v5(reg, record);
  const ClaimResultV5& pre = result_of(results, "PreNI");
  EXPECT_GT(pre.low90, -1.0);
  EXPECT_EQ(pre.verdict, "reproduced");
  const ClaimResultV5& small_effect = result_of(results, "W1@5e-4");
  EXPECT_LT(small_effect.high90, 2.0);
  EXPECT_EQ(small_effect.verdict, "contradicted");
  const ClaimResultV5& wide_effect = result_of(results, "W179@1e-3");
  EXPECT_EQ(wide_effect.verdict, "inconclusive");
  // Holm within the family: adjusted p at least the raw one.
  for (const ClaimResultV5& r : results)
    if (std::isfinite(r.p)) {
      EXPECT_GE(r.p_holm, r.p - 1e-15) << r.claim->id;
    }
}

TEST(AnalysisV5, EpochsToThresholdIsTheFirstEpochReachingItOrTheHorizonPlusOne) {
  const RegistrationV5 reg = load_registration_v5(kRegistration);
  RecordRunV5 run;
  run.status = "completed";
  std::vector<CurvePointV5> curve;
  for (int e = 1; e <= reg.epochs; ++e) curve.push_back({e, 3.0, 2.5 * e});
  const double first = std::ceil(reg.threshold_val_bleu / 2.5);  // the first epoch with 2.5 e >= threshold
  ASSERT_LE(first, static_cast<double>(reg.epochs));
  EXPECT_EQ(epochs_to_threshold(reg, run, curve), first);
  for (CurvePointV5& p : curve) p.val_bleu = 1.0;
  EXPECT_EQ(epochs_to_threshold(reg, run, curve), static_cast<double>(reg.epochs + 1));
  run.status = "diverged";
  curve[0].val_bleu = 50;
  EXPECT_EQ(epochs_to_threshold(reg, run, curve), static_cast<double>(reg.epochs + 1));
}

// The pooled bootstrap: the corpus BLEU of every seed's translations of one arm against the other's,
// on the test sentences of the seeds that have both (seed 2003's compared run diverged: none).
TEST(AnalysisV5, ThePooledBootstrapComparesTheCorpusBleuOfEverySeedsTranslations) {
  const RegistrationV5 reg = load_registration_v5(kRegistration);
  std::vector<MadeUpRun> runs;
  for (int i = 0; i < 5; ++i) {
    runs.push_back({"post-w1432-1e-3", 2001 + i, 30, 30});
    runs.push_back({"post-w1-1e-3", 2001 + i, 5, 5});
  }
  runs[5].status = "diverged";
  test::ScratchDir dir;
  write_record(dir, runs);
  const std::vector<std::string> first = {"the man went to the land of moab", "a famine was in the land"},
                                 second = {"it came to pass in the days of the judges", "and a man went"};
  dir.write("test_references.tsv", first[0] + "\t" + second[0] + "\n" + first[1] + "\t" + second[1] + "\n");
  std::filesystem::create_directories(dir.path() / "hypotheses");
  std::vector<std::string> all_a, all_b, all_first, all_second;
  for (int i = 0; i < 5; ++i) {
    const std::vector<std::string> a = {"the man went to moab", i % 2 ? "a famine in the land" : "there was a famine"},
                                   b = {"man land", "the the the"};
    dir.write(fmt::format("hypotheses/post-w1432-1e-3,seed={}.txt", 2001 + i), a[0] + "\n" + a[1] + "\n");
    if (i == 2) continue;  // diverged: no translations
    dir.write(fmt::format("hypotheses/post-w1-1e-3,seed={}.txt", 2001 + i), b[0] + "\n" + b[1] + "\n");
    all_a.insert(all_a.end(), a.begin(), a.end());
    all_b.insert(all_b.end(), b.begin(), b.end());
    all_first.insert(all_first.end(), first.begin(), first.end());
    all_second.insert(all_second.end(), second.begin(), second.end());
  }
  RecordV5 record = read_record_v5(dir.path());
  classify_runs(reg, kRegistered, record);
  const std::vector<ClaimResultV5> results = analyse_v5(reg, record);
  const ClaimResultV5& w = result_of(results, "W1@1e-3");
  const double want = corpus_bleu_score(all_a, {all_first, all_second}).score -
                      corpus_bleu_score(all_b, {all_first, all_second}).score;
  EXPECT_NEAR(w.pooled_difference, want, 1e-9);
  EXPECT_LE(w.pooled_low, w.pooled_difference);
  EXPECT_GE(w.pooled_high, w.pooled_difference);
}

TEST(AnalysisV5, ADamagedRecordNamesTheFileLineAndColumn) {
  test::ScratchDir dir;
  write_record(dir, {{"pre-sec4", 2001, 30, 30}});
  dir.write("runs.csv", "run,arm,seed,status,test_bleu,test_bleu_last,epochs_done,best_epoch,started_utc,"
                        "finished_utc,commit,code_crc32,cpu\n\"pre-sec4,seed=2001\",pre-sec4,2001,completed,thirty,"
                        "30,10,9,2026-12-06T05:00:00Z,2026-12-06T06:00:00Z,abcdef123456,0000abcd,Test CPU\n");
  try {
    read_record_v5(dir.path());
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("runs.csv:2: column 'test_bleu' holds 'thirty'"), std::string::npos) << m;
  }
}

// A seed, an epoch count or an epoch that is not a whole number within +-2^31 is an error, where
// a cast used to truncate 2001.5 to 2001 and turn 6.7e13 into undefined behaviour (found by
// tests/fuzz/fuzz_record_v5 under UBSan).
TEST(AnalysisV5, AnIntegerColumnMustHoldASmallWholeNumber) {
  for (const auto& [seed, epochs] : std::vector<std::pair<std::string, std::string>>{
           {"2001.5", "10"}, {"66651800000000", "10"}, {"nan", "10"}, {"2001", "1e300"}}) {
    test::ScratchDir dir;
    write_record(dir, {{"pre-sec4", 2001, 30, 30}});
    dir.write("runs.csv", "run,arm,seed,status,test_bleu,test_bleu_last,epochs_done,best_epoch,started_utc,"
                          "finished_utc,commit,code_crc32,cpu\n\"pre-sec4,seed=2001\",pre-sec4," + seed +
                              ",completed,30,30," + epochs + ",9,2026-12-06T05:00:00Z,2026-12-06T06:00:00Z,abcdef123456,"
                              "0000abcd,Test CPU\n");
    std::string message;
    try {
      read_record_v5(dir.path());
    } catch (const Error& e) {
      message = e.what();
    }
    const std::string column = seed != "2001" ? "seed" : "epochs_done";
    EXPECT_NE(message.find("runs.csv:2: column '" + column + "' holds"), std::string::npos) << seed << " " << message;
    EXPECT_NE(message.find("not a whole number"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace normlab::xiong
