// The post-hoc audit of the registered v4 claims (xiong/sensitivity_audit.h): on the committed
// record, E3a@5e-4 and E3h@3e-2 change verdict on the last evaluation (flagged) and E3a@1e-3 does
// not; the per-run statistics and the convergence rule on made-up curves.
#include <gtest/gtest.h>

#include <filesystem>

#include "xiong/grids.h"
#include "xiong/outcomes.h"
#include "xiong/run_record.h"
#include "xiong/sensitivity_audit.h"

namespace fs = std::filesystem;

namespace normlab::xiong {
namespace {

const fs::path kSource = NORMLAB_SOURCE_DIR;

// The row of `id` in the audit's verdict table.
std::string row_of(const std::string& md, const std::string& id) {
  const size_t at = md.find("\n| " + id + " |");
  return at == std::string::npos ? "" : md.substr(at + 1, md.find('\n', at + 1) - at - 1);
}

TEST(SensitivityAudit, TheCommittedRecordsDisagreementsAreFlagged) {
  const Registration reg = load_registration((kSource / "xiong" / "registration.toml").string());
  Context ctx;
  ctx.grids = make_grids(false);
  ctx.source_dir = kSource;
  ctx.config_dir = kSource / "xiong" / "configs";
  ctx.out_dir = fs::temp_directory_path() / ("normlab_audit_" + std::to_string(::getpid()));
  ctx.quiet = true;
  const ConfirmatoryRuns runs = read_confirmatory_record(ctx, reg, kSource / "docs" / "xiong" / "data" / "v4");
  const std::string md = sensitivity_audit(reg, runs, copy_baseline(ctx.config_path(kCopyConfigV4)).learn_below);
  EXPECT_NE(row_of(md, "E3a@5e-4").find("| inconclusive, "), std::string::npos) << md;
  EXPECT_NE(row_of(md, "E3a@5e-4").find("**disagree**"), std::string::npos) << md;
  EXPECT_NE(row_of(md, "E3h@3e-2").find("**disagree**"), std::string::npos) << md;
  EXPECT_EQ(row_of(md, "E3a@1e-3").find("**disagree**"), std::string::npos) << md;
  EXPECT_NE(md.find("2 claims change verdict under another statistic"), std::string::npos) << md;
  fs::remove_all(ctx.out_dir);
}

RunOutcome run_with(const std::vector<double>& losses, RunStatus status = RunStatus::Completed) {
  RunOutcome r;
  r.status = status;
  r.steps = static_cast<int64_t>(losses.size()) * 100;
  r.initial_loss = 9.0;
  for (size_t i = 0; i < losses.size(); ++i) r.val_curve.push_back({static_cast<double>((i + 1) * 100), losses[i]});
  return r;
}

TEST(SensitivityAudit, PerRunStatisticsAndTheConvergenceRule) {
  // Ten evaluations: the window (after 80%) is the last two, the 20% before it the two before.
  const RunOutcome flat = run_with({5, 4, 3, 2, 1, 1, 1.00, 1.01, 1.02, 1.005});
  EXPECT_DOUBLE_EQ(last_evaluation(flat), 1.005);
  EXPECT_DOUBLE_EQ(window_median(flat), (1.02 + 1.005) / 2);
  EXPECT_TRUE(converged(flat, "copy"));  // |1.0125 - 1.005| < 0.02
  EXPECT_TRUE(converged(flat, "text"));
  const RunOutcome falling = run_with({5, 4, 3, 2, 1.5, 1.4, 1.3, 1.2, 1.1, 1.0});
  EXPECT_FALSE(converged(falling, "copy"));  // 1.25 -> 1.05
  EXPECT_FALSE(converged(falling, "text"));  // 16% lower
  const RunOutcome slow = run_with({5, 4, 3, 2, 1, 1, 1.0, 0.99, 0.985, 0.98});
  EXPECT_TRUE(converged(slow, "copy"));   // 0.995 -> 0.9825: within 0.02 nats
  EXPECT_TRUE(converged(slow, "text"));   // 1.3% lower
  const RunOutcome diverged = run_with({5, 4, 3, 2, 1, 1, 1, 1, 1, 1}, RunStatus::Diverged);
  EXPECT_FALSE(converged(diverged, "copy"));
  EXPECT_DOUBLE_EQ(last_evaluation(diverged), 9.0);
  EXPECT_DOUBLE_EQ(window_median(diverged), 9.0);
}

}  // namespace
}  // namespace normlab::xiong
