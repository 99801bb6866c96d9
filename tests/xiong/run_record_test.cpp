// The confirmatory runs read back from their record (xiong/run_record.h): the committed record
// (docs/xiong/data/v4) holds every registered training run, and its analysis gives the verdicts,
// estimates and p-values that the committed confirmatory-v4.md reports; a malformed record is
// refused naming the file, line and column.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/files.h"
#include "xiong/front_door.h"
#include "xiong/grids.h"
#include "xiong/outcomes.h"
#include "xiong/confirmatory.h"
#include "xiong/registered_analysis.h"
#include "xiong/run_record.h"
#include "xiong/sensitivity_audit.h"

namespace fs = std::filesystem;

namespace normlab::xiong {
namespace {

const fs::path kSource = NORMLAB_SOURCE_DIR;

Context source_context(const fs::path& out) {
  Context ctx;
  ctx.grids = make_grids(false);
  ctx.source_dir = kSource;
  ctx.config_dir = kSource / "xiong" / "configs";
  ctx.out_dir = out;
  ctx.quiet = true;
  return ctx;
}

fs::path temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("normlab_record_" + name + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// The lines of confirmatory-v4.md's tables that start with "| <id> |" (run status, analysis, v3).
std::vector<std::string> report_rows(const std::string& report, const std::string& id) {
  std::vector<std::string> rows;
  for (size_t at = report.find("\n| " + id + " |"); at != std::string::npos; at = report.find("\n| " + id + " |", at + 1))
    rows.push_back(report.substr(at + 1, report.find('\n', at + 1) - at - 1));
  return rows;
}

TEST(RunRecord, TheCommittedRecordGivesTheCommittedReportsTrainingRows) {
  const Registration reg = load_registration((kSource / "xiong" / "registration.toml").string());
  const Context ctx = source_context(temp_dir("committed"));
  const ConfirmatoryRuns runs = read_confirmatory_record(ctx, reg, kSource / "docs" / "xiong" / "data" / "v4");
  const std::string report = read_whole_file(kSource / "docs" / "xiong" / "confirmatory-v4.md", "test");
  const double copy_learned = copy_baseline(ctx.config_path(kCopyConfigV4)).learn_below;
  int training_claims = 0;
  for (const RegisteredClaim& c : reg.claims) {
    if (c.task == "init") continue;
    ++training_claims;
    const ClaimAnalysis a = analyse_claim(reg, c, c.task == "text" ? runs.text : runs.copy, copy_learned);
    EXPECT_EQ(a.runs_found, a.runs_expected) << c.id;
    // verdict, estimate [95% CI] and primary p, as the analysis table writes them after the statement
    const std::string cells = fmt::format(" | {} | {} | {} |", a.verdict, interval_text(a.estimate), num(a.primary_p, 3));
    const std::vector<std::string> rows = report_rows(report, c.id);
    EXPECT_TRUE(std::any_of(rows.begin(), rows.end(), [&](const std::string& r) { return r.find(cells) != std::string::npos; }))
        << c.id << ": analysis" << cells << " in none of its " << rows.size() << " rows of confirmatory-v4.md";
  }
  EXPECT_GE(training_claims, 12);
  fs::remove_all(ctx.out_dir);
}

// Everything of confirmatory.md from its run table on: the header's date and the runs' source differ.
std::string from_run_table(const std::string& report) {
  const size_t at = report.find("\n| claim | family |");
  return at == std::string::npos ? "" : report.substr(at);
}

TEST(RunRecord, TheCommittedReportIsTheRegisteredAnalysisOfTheCommittedRecord) {
  const fs::path record = kSource / "docs" / "xiong" / "data" / "v4";
  ASSERT_TRUE(fs::exists(record / kRecordInitProbes)) << "the record keeps the init probes the report used";
  const Registration reg = load_registration((kSource / "xiong" / "registration.toml").string());
  const Context ctx = source_context(temp_dir("report"));
  const std::string md = confirmatory_report(ctx, reg, read_confirmatory_record(ctx, reg, record),
                                             [](const std::string&) { return true; });
  const std::string committed = read_whole_file(kSource / "docs" / "xiong" / "confirmatory-v4.md", "test");
  EXPECT_FALSE(from_run_table(md).empty());
  EXPECT_EQ(from_run_table(md), from_run_table(committed))
      << "regenerate it: normlab reproduce xiong --confirmatory --analyse-only --record docs/xiong/data/v4";
  EXPECT_NE(md.find("| order-3 Markov model |"), std::string::npos);
  // The committed probes were read, not measured again: a cache whose key no longer matches the
  // code's (a config key added to the key's text) is measured anew and rewritten, on this CPU.
  EXPECT_EQ(read_whole_file(ctx.out_dir / "cache" / "v4_init_probes.json", "test"),
            read_whole_file(record / kRecordInitProbes, "test"))
      << "the init probes' cache key changed: the committed probes were not used";
  fs::remove_all(ctx.out_dir);
}

// The front door (xiong/front_door.h): the table at the top of docs/xiong/README.md and in the root
// README's Results is the registered analysis of the committed record, line for line.
TEST(RunRecord, TheFrontDoorTablesAreTheAnalysisOfTheCommittedRecord) {
  const Registration reg = load_registration((kSource / "xiong" / "registration.toml").string());
  const Context ctx = source_context(temp_dir("front_door"));
  const ConfirmatoryRuns runs = read_confirmatory_record(ctx, reg, kSource / "docs" / "xiong" / "data" / "v4");
  const std::string fix = "regenerate it: normlab reproduce xiong --confirmatory --analyse-only --record docs/xiong/data/v4, "
                          "then paste runs/xiong-v4/front_door.md between the markers (links under docs/xiong/ at the root)";
  EXPECT_EQ(front_door_of(read_whole_file(kSource / "docs" / "xiong" / "README.md", "test")),
            front_door_text(ctx, reg, runs, "")) << fix;
  EXPECT_EQ(front_door_of(read_whole_file(kSource / "README.md", "test")), front_door_text(ctx, reg, runs, "docs/xiong/"))
      << fix;
  fs::remove_all(ctx.out_dir);
}

// A record of one run "r" of task copy, its curve rows as given; without fingerprints, so marked
// legacy unless `legacy` is false.
fs::path write_record(const std::string& name, const std::string& runs_rows, const std::string& curve_rows,
                      bool legacy = true) {
  const fs::path dir = temp_dir(name);
  if (legacy) std::ofstream(dir / kRecordLegacy) << "a test record without fingerprints\n";
  std::ofstream(dir / kRecordRuns) << "task,run,status,steps_done,final_val_loss,initial_loss,diverged_at_step\n"
                                   << runs_rows;
  std::ofstream(dir / kRecordCurves) << "task,run,step,lr,val_loss\n" << curve_rows;
  return dir;
}

std::string record_error(const fs::path& dir) {
  const Registration reg = load_registration((kSource / "xiong" / "registration.toml").string());
  try {
    read_confirmatory_record(source_context(dir), reg, dir);
  } catch (const Error& e) {
    fs::remove_all(dir);
    return e.what();
  }
  fs::remove_all(dir);
  return "";
}

TEST(RunRecord, AMalformedRecordIsRefusedNamingTheFileLineAndColumn) {
  const std::string ok_run = "copy,r,completed,4000,0.5,4.1,\n";
  EXPECT_NE(record_error(write_record("number", ok_run, "copy,r,50,0.001,4.x\n")).find("val_curves.csv:2: column 'val_loss' holds '4.x'"),
            std::string::npos);
  EXPECT_NE(record_error(write_record("order", ok_run, "copy,r,100,0.001,4\ncopy,r,50,0.001,3\n")).find("val_curves.csv:3: step 50 after step 100"),
            std::string::npos);
  EXPECT_NE(record_error(write_record("orphan", ok_run, "copy,other,50,0.001,4\n")).find("val_curves.csv:2: run 'other' is not in"),
            std::string::npos);
  EXPECT_NE(record_error(write_record("diverged", "copy,r,diverged,300,nan,,300\n", "")).find("val_curves_runs.csv:2: run 'r' diverged but has no initial_loss"),
            std::string::npos);
  EXPECT_NE(record_error(write_record("status", "copy,r,running,300,nan,,\n", "")).find("val_curves_runs.csv:2: status 'running'"),
            std::string::npos);
  EXPECT_NE(record_error(write_record("cells", "copy,r,completed,4000\n", "")).find("val_curves_runs.csv:2: 4 cells where the header has 7"),
            std::string::npos);
  EXPECT_NE(record_error(write_record("twice", ok_run + ok_run, "")).find("val_curves_runs.csv:3: run 'r' is listed twice"),
            std::string::npos);
  EXPECT_NE(record_error(write_record("no_fingerprint", ok_run, "", false))
                .find("val_curves_runs.csv:2: run 'r' has no fingerprint (of the config it was made with); a record "
                      "whose rows cannot carry one says why in"),
            std::string::npos);
}

TEST(RunRecord, ARegisteredRunAbsentFromTheRecordIsMissingAndADivergedOneCountsAsItsInitialLoss) {
  const Registration reg = load_registration((kSource / "xiong" / "registration.toml").string());
  const RegisteredClaim& c = reg.require("E3a@1e-3");
  TrainPoint first = reg.runs_of(c).front();
  const std::string name = first.sweep_point().name;
  const fs::path dir = write_record("missing", "copy," + name + ",diverged,300,nan,4.25,300\n",
                                    "copy," + name + ",50,0.001,4.2\n");
  const Context ctx = source_context(dir);
  const ConfirmatoryRuns runs = read_confirmatory_record(ctx, reg, dir);
  const RunOutcome* r = runs.copy.find(first);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->status, RunStatus::Diverged);
  EXPECT_EQ(final_quality(*r), 4.25);
  ASSERT_EQ(r->val_curve.size(), 1u);
  const RunOutcome* other = runs.copy.find(reg.runs_of(c).back());
  // A run listed as completed whose validation loss passes the suite's limit after step 100 is
  // diverged by the suite's rule (outcomes.h), as when read from its run directory.
  const TrainPoint second = reg.runs_of(c)[1];
  const std::string limit = std::to_string(2 * copy_baseline(ctx.config_path(kCopyConfigV4)).diverge_above);
  const fs::path spiked = write_record("spiked", "copy," + second.sweep_point().name + ",completed,4000,0.5,4.1,\n",
                                       "copy," + second.sweep_point().name + ",150,0.001," + limit + "\n");
  const ConfirmatoryRuns spiked_runs = read_confirmatory_record(source_context(spiked), reg, spiked);
  EXPECT_EQ(spiked_runs.copy.find(second)->status, RunStatus::Diverged);
  fs::remove_all(spiked);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->status, RunStatus::Missing);
  EXPECT_EQ(analyse_claim(reg, c, runs.copy, 2.07).verdict, "incomplete");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace normlab::xiong
