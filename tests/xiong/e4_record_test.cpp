// E4's exploratory grid read back from its record (docs/xiong/data/v4-e4, xiong/run_record.h):
// `normlab reproduce xiong --only E4 --analyse-only --record DIR` trains nothing and writes the
// report; without --analyse-only a suite takes the runs the record holds (made with the same
// config) and trains only the others.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/files.h"
#include "xiong/experiments.h"
#include "config/config.h"
#include "xiong/arms.h"
#include "xiong/grids.h"
#include "xiong/training.h"
#include "xiong/suite.h"

namespace fs = std::filesystem;

namespace normlab::xiong {
namespace {

const fs::path kSource = NORMLAB_SOURCE_DIR;
const fs::path kE4Record = kSource / "docs" / "xiong" / "data" / "v4-e4";

fs::path temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("normlab_e4_record_" + name + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

SuiteOptions record_options(const fs::path& record, const fs::path& out) {
  SuiteOptions o;
  o.analyse_only = true;
  o.record_dir = record.string();
  o.only = {"E4"};
  o.out_dir = out.string();
  o.config_dir = (kSource / "xiong" / "configs").string();
  o.quiet = true;
  return o;
}

TEST(E4Record, ARunAbsentFromTheRecordIsMissingNotTrained) {
  const fs::path record = temp_dir("one_run"), out = temp_dir("one_run_out");
  fs::create_directories(record);
  const TrainPoint first = e4_points(make_grids(false)).front();
  std::ofstream(record / "legacy.txt") << "a test record without fingerprints\n";
  std::ofstream(record / "val_curves_runs.csv")
      << "task,run,status,steps_done,final_val_loss,initial_loss,diverged_at_step\n"
      << "copy," << first.sweep_point().name << ",completed,1000,0.5,4.1,\n";
  std::ofstream(record / "val_curves.csv") << "task,run,step,lr,val_loss\n"
                                           << "copy," << first.sweep_point().name << ",1000,0.0001,0.5\n";
  const std::string md = read_whole_file(run_xiong_suite(record_options(record, out)), "test");
  EXPECT_FALSE(fs::exists(out / "copy"));
  // The one recorded run is the first cell of the table: its loss, 1 of 1 seeds learned.
  EXPECT_NE(md.find("| 0.5 (1/1) |"), std::string::npos) << md;
  fs::remove_all(record);
  fs::remove_all(out);
}

TEST(E4Record, ASuiteTrainsOnlyTheRunsTheRecordLacksOrHoldsFromAnotherConfig) {
  const fs::path record = temp_dir("resume"), out = temp_dir("resume_out");
  fs::create_directories(record);
  Context ctx;
  ctx.grids = make_grids(true);
  ctx.config_dir = kSource / "xiong" / "configs";
  ctx.out_dir = out;
  ctx.normlab_binary = NORMLAB_BINARY_DIR "/normlab";
  ctx.quiet = true;
  ctx.record_dir = record;
  ctx.train_absent = true;
  const std::string config = "copy_task_quick.toml";
  const TrainPoint kept{"pre", "layernorm", "adam", "1e-3", 1, 1}, stale{"pre", "layernorm", "adam", "1e-3", 1, 2},
      absent{"pre", "layernorm", "adam", "1e-3", 1, 3};
  const std::string fingerprint = config_fingerprint(point_config(ctx.config_path(config), kept));
  std::ofstream(record / "val_curves_runs.csv")
      << "task,run,status,steps_done,final_val_loss,initial_loss,diverged_at_step,fingerprint\n"
      << "copy," << kept.sweep_point().name << ",completed,300,0.5,3.5,," << fingerprint << "\n"
      << "copy," << stale.sweep_point().name << ",completed,300,0.5,3.5,,0123456789abcdef\n";
  std::ofstream(record / "val_curves.csv") << "task,run,step,lr,val_loss\n";
  const TrainingResults results = run_training(ctx, config, {kept, stale, absent}, "copy");
  ASSERT_NE(results.find(kept), nullptr);
  EXPECT_EQ(results.find(kept)->final_val, 0.5) << "taken from the record";
  EXPECT_FALSE(fs::exists(out / "copy" / kept.sweep_point().name)) << "a recorded run is not trained again";
  for (const TrainPoint& trained : {stale, absent}) {
    ASSERT_NE(results.find(trained), nullptr);
    EXPECT_EQ(results.find(trained)->status, RunStatus::Completed) << trained.sweep_point().name;
    EXPECT_NE(results.find(trained)->final_val, 0.5);
    EXPECT_TRUE(fs::exists(out / "copy" / trained.sweep_point().name / "summary.json"));
  }
  fs::remove_all(record);
  fs::remove_all(out);
}

// Everything of an E4 report from its verdict table on: the header's date and paths differ.
std::string from_verdicts(const std::string& report) {
  const size_t at = report.find("## Verdicts");
  return at == std::string::npos ? "" : report.substr(at);
}

TEST(E4Record, TheCommittedReportIsTheAnalysisOfTheCommittedRecord) {
  const fs::path out = temp_dir("committed");
  const std::string md = read_whole_file(run_xiong_suite(record_options(kE4Record, out)), "test");
  const std::string committed = read_whole_file(kSource / "docs" / "xiong" / "e4-v4" / "report.md", "test");
  EXPECT_FALSE(from_verdicts(md).empty());
  EXPECT_EQ(from_verdicts(md), from_verdicts(committed))
      << "regenerate it: normlab reproduce xiong --only E4 --analyse-only --record docs/xiong/data/v4-e4 "
         "--out docs/xiong/e4-v4";
  EXPECT_EQ(md.find("(0/0)"), std::string::npos) << "every cell of the grid has its runs in the record";
  fs::remove_all(out);
}

std::string option_error(SuiteOptions o) {
  try {
    run_xiong_suite(o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(E4Record, TheRecordOptionsAreRefusedOutOfPlace) {
  const fs::path refused = temp_dir("refused");
  SuiteOptions no_record = record_options("", refused);
  EXPECT_NE(option_error(no_record).find("--analyse-only needs --confirmatory (the runs in DIR) or --record DIR"),
            std::string::npos);
  SuiteOptions confirmatory_training = record_options(kE4Record, refused);
  confirmatory_training.analyse_only = false;
  confirmatory_training.confirmatory = true;
  confirmatory_training.only.clear();
  EXPECT_NE(option_error(confirmatory_training).find("--confirmatory --record needs --analyse-only"), std::string::npos);
  SuiteOptions quick = record_options(kE4Record, refused);
  quick.quick = true;
  EXPECT_NE(option_error(quick).find("--record holds the full design's runs"), std::string::npos);
  EXPECT_FALSE(fs::exists(refused)) << "a refused option writes nothing";
}

TEST(E4Record, OnlyIsParsedOnceAndATokenThatSelectsNothingIsRefused) {
  const fs::path out = temp_dir("only");
  SuiteOptions unknown = record_options(kE4Record, out);
  unknown.only = {"E11"};
  EXPECT_NE(option_error(unknown).find("unknown experiment or claim 'E11' in --only"), std::string::npos);
  SuiteOptions unregistered = record_options(kSource / "docs" / "xiong" / "data" / "v4", out);
  unregistered.confirmatory = true;
  unregistered.only = {"E3a", "E4"};
  EXPECT_NE(option_error(unregistered).find("--only E4: no registered claim matches it"), std::string::npos);
  fs::remove_all(out);
}

}  // namespace
}  // namespace normlab::xiong
