// E4's exploratory grid read back from its record (docs/xiong/data/v4-e4, xiong/run_record.h):
// `normlab reproduce xiong --only E4 --analyse-only --record DIR` trains nothing and writes the
// report that the committed docs/xiong/e4-v4/report.md is, from its verdict table on.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/files.h"
#include "xiong/experiments.h"
#include "xiong/grids.h"
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
  SuiteOptions no_analysis = record_options(kE4Record, refused);
  no_analysis.analyse_only = false;
  EXPECT_NE(option_error(no_analysis).find("--record needs --analyse-only"), std::string::npos);
  SuiteOptions quick = record_options(kE4Record, refused);
  quick.quick = true;
  EXPECT_NE(option_error(quick).find("--record analyses the full design"), std::string::npos);
  EXPECT_FALSE(fs::exists(refused)) << "a refused option writes nothing";
}

}  // namespace
}  // namespace normlab::xiong
