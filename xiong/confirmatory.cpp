#include "xiong/confirmatory.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "core/files.h"
#include "io/shell_words.h"
#include "xiong/arms.h"
#include "xiong/outcomes.h"
#include "xiong/registered_analysis.h"
#include "xiong/registered_init.h"
#include "xiong/post_hoc_effects.h"
#include "xiong/sensitivity_audit.h"
#include "xiong/v3_comparison.h"

namespace fs = std::filesystem;

namespace normlab::xiong {

std::string confirmatory_config(const RegisteredClaim& claim) {
  return claim.task == "text" ? kTextConfigV4 : kCopyConfigV4;
}

void check_horizons(const Context& ctx, const Registration& reg) {
  for (const RegisteredClaim& c : reg.claims) {
    if (c.task == "init") continue;
    for (const TrainPoint& p : reg.runs_of(c)) {
      const int64_t steps = point_config(ctx.config_path(confirmatory_config(c)), p).train.steps;
      NL_CHECK(steps == c.steps, "registration",
               "{} line {}: claim '{}' registers {} steps but its run {} of {} trains {}", reg.path, c.line, c.id,
               c.steps, p.name(), confirmatory_config(c), steps);
    }
  }
}

void apply_divergence_rules(const Context& ctx, ConfirmatoryRuns& runs) {
  runs.copy.apply_divergence_rule(copy_baseline(ctx.config_path(kCopyConfigV4)).diverge_above, Baseline::kDivergenceAfter);
  if (runs.text.size() > 0)
    runs.text.apply_divergence_rule(text_baseline(ctx.config_path(kTextConfigV4)).diverge_above, Baseline::kDivergenceAfter);
}

std::vector<TrainPoint> task_runs(const Registration& reg, const std::string& task,
                                  const std::function<bool(const std::string&)>& selected) {
  std::vector<TrainPoint> points;
  for (const RegisteredClaim& c : reg.claims) {
    if (c.task != task || !selected(c.id)) continue;
    const std::vector<TrainPoint> runs = reg.runs_of(c);
    points.insert(points.end(), runs.begin(), runs.end());
  }
  return points;
}

namespace {

// The first line a command prints ("" when it cannot run).
std::string first_line_of(const std::string& command) {
  std::string line;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[512];
    if (fgets(buffer, sizeof buffer, pipe)) line = buffer;
    pclose(pipe);
  }
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

}  // namespace

std::string registration_commit(const std::string& registration_path) {
  const fs::path file = fs::absolute(registration_path);
  const std::string dir = shell_quote(file.parent_path().string()), name = shell_quote(file.filename().string());
  const std::string commit =
      first_line_of(fmt::format("git -C {} log -1 --format='%H (%cs)' -- {} 2>/dev/null", dir, name));
  if (commit.empty()) return "unknown (not in a git checkout, or never committed)";
  const bool modified = !first_line_of(fmt::format("git -C {} status --porcelain -- {} 2>/dev/null", dir, name)).empty();
  return commit + (modified ? " - modified since: the file differs from that commit" : "");
}

std::string registration_commit_utc(const std::string& registration_path) {
  const fs::path file = fs::absolute(registration_path);
  const std::string dir = shell_quote(file.parent_path().string()), name = shell_quote(file.filename().string());
  return first_line_of(fmt::format("TZ=UTC git -C {} log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ "
                                   "-- {} 2>/dev/null", dir, name));
}

namespace {

// "## From v3 to v4": the table of xiong/v3_comparison.h against the source tree's v3 verdicts.
std::string v3_section(const Context& ctx, const std::vector<ClaimAnalysis>& analysis) {
  const fs::path v3 = ctx.source_dir / "docs" / "xiong" / "data" / "verdicts.json";
  std::string md = "## From v3 to v4\n\n";
  const std::string name = "docs/xiong/data/verdicts.json";  // as the source tree names it, wherever that is
  if (!fs::exists(v3)) return md + fmt::format("v3's verdicts ({}) are not in this source tree.\n", name);
  md += fmt::format("Each registered claim beside the v3 verdicts it replaces ({}; v3 decided E3d at two targets, "
                    "E3d.to0.5 and .to0.1). \"kept\": every v3 row had v4's verdict.\n\n", name);
  return md + v3_to_v4_table(analysis, nlohmann::json::parse(read_whole_file(v3, "reproduce")));
}

// "## The text task against Markov baselines": each registered text arm's final quality over its
// seeds beside order-0..5 Markov models of text_task_v4.toml's validation split, then a sentence
// derived from the table: which orders the best arm beats and which it loses to.
std::string text_baselines_section(const Context& ctx, const Registration& reg, const ConfirmatoryRuns& runs) {
  if (runs.text.size() == 0) return "";
  const std::vector<int> orders = {0, 1, 2, 3, 4, 5};
  const std::vector<Baseline> markov = markov_baselines(ctx.config_path(kTextConfigV4), orders);
  std::vector<std::vector<std::string>> rows;
  for (const Baseline& b : markov) rows.push_back({b.name, num(b.loss, 3), "", "", "", "", ""});
  std::set<std::string> seen;
  std::string best_arm;
  double best = INFINITY;
  for (const RegisteredClaim& c : reg.claims) {
    if (c.task != "text") continue;
    for (size_t a = 0; a < c.points.size(); ++a) {
      if (!seen.insert(c.arms[a]).second) continue;
      std::vector<double> q;
      for (const int seed : reg.seeds_of(c)) {
        TrainPoint p = parse_point(c.points[a], reg.path + ": claim '" + c.id + "'");
        p.seed = seed;
        const RunOutcome* r = runs.text.find(p);
        if (r) q.push_back(final_quality(*r));
      }
      const double mean = mean_interval(q).estimate;  // the mean that mean_ci_text prints
      if (std::isfinite(mean) && mean < best) best = mean, best_arm = c.arms[a];
      std::vector<std::string> row = {c.arms[a] + " (" + c.id + ")", mean_ci_text(q)};
      for (size_t order = 1; order < orders.size(); ++order)
        row.push_back(std::isfinite(mean) ? (mean < markov[order].loss ? "yes" : "no") : "-");
      rows.push_back(row);
    }
  }
  return "## The text task against Markov baselines\n\nFinal quality (nats/char, mean [95% t] over the "
         "confirmatory seeds) beside Witten-Bell Markov models of " + std::string(kTextConfigV4) +
         "'s text, fitted on its training split and scored on the same validation split (data/markov.h; "
         "`normlab baseline`).\n\n" +
         md_table({"model", "validation loss", "below order 1", "below order 2", "below order 3", "below order 4",
                   "below order 5"}, rows) +
         "\n" + markov_sentence(best_arm, best, markov, orders) + "\n\n";
}

}  // namespace

// "The best text arm, <arm> (<loss> nats/char), is below the order-0 (..) ... and loses to the
// order-4 (..) and ...": derived from the numbers; "" without a finite best arm.
std::string markov_sentence(const std::string& arm, double loss, const std::vector<Baseline>& markov,
                            const std::vector<int>& orders) {
  if (!std::isfinite(loss)) return "";
  std::vector<std::string> beaten, lost_to;
  int first_lost = -1;
  for (size_t i = 0; i < markov.size(); ++i) {
    const bool below = loss < markov[i].loss;
    (below ? beaten : lost_to).push_back(fmt::format("order-{} ({})", orders[i], num(markov[i].loss, 3)));
    if (!below && first_lost < 0) first_lost = orders[i];
  }
  const auto list = [](const std::vector<std::string>& v) { return v.empty() ? std::string("none") : fmt::format("{}", fmt::join(v, ", ")); };
  const std::string verdict = first_lost < 0 ? "" : fmt::format(": no arm predicts better than a model that sees only "
                                                                "the previous {} characters", first_lost);
  return fmt::format("The best text arm, {} ({} nats/char), is below the Markov models of {} and loses to {}{}.", arm,
                     num(loss, 3), list(beaten), list(lost_to), verdict);
}

ConfirmatoryRuns read_confirmatory(const Context& ctx, const Registration& reg) {
  auto all = [](const std::string&) { return true; };
  ConfirmatoryRuns out;
  out.copy = read_training(ctx, kCopyConfigV4, task_runs(reg, "copy", all), "copy");
  out.text = read_training(ctx, kTextConfigV4, task_runs(reg, "text", all), "text");
  out.source = "the run directories in " + ctx.out_dir.string();
  apply_divergence_rules(ctx, out);
  return out;
}

std::vector<ClaimAnalysis> confirmatory_analysis(const Context& ctx, const Registration& reg,
                                                 const ConfirmatoryRuns& runs) {
  const double copy_learned = copy_baseline(ctx.config_path(kCopyConfigV4)).learn_below;
  const nlohmann::json probes = measure_init_probes(ctx, reg);
  return analyse_registered(reg, runs, copy_learned, NAN, &probes);
}

std::string confirmatory_report(const Context& ctx, const Registration& reg, const ConfirmatoryRuns& runs,
                                const std::function<bool(const std::string&)>& selected) {
  const std::vector<ClaimAnalysis> analysis = confirmatory_analysis(ctx, reg, runs);
  return fmt::format(
      "# Xiong v4: the confirmatory runs and their registered analysis ({})\n\n"
      "Registration: {} (protocol {}), last changed in commit {}. Confirmatory seeds {}; alpha {} family-wise "
      "(Holm over the whole family \"paper\"; a claim not yet decided counts as p = 1).\n\n"
      "## Runs\n\nRead from {}.\n\n{}\n## Registered analysis\n\n{}\n{}{}{}{}",
      now_text(), reg.path, reg.protocol, registration_commit(reg.path), fmt::join(reg.confirmatory_seeds, ", "),
      reg.alpha, runs.source, confirmatory_status(reg, runs, selected), registered_tables(analysis, reg.alpha),
      post_hoc_effects(reg, runs, analysis, copy_baseline(ctx.config_path(kCopyConfigV4)).learn_below),
      sensitivity_audit(reg, runs, copy_baseline(ctx.config_path(kCopyConfigV4)).learn_below),
      text_baselines_section(ctx, reg, runs), v3_section(ctx, analysis));
}

ConfirmatoryRuns run_confirmatory(const Context& ctx, const Registration& reg,
                                  const std::function<bool(const std::string&)>& selected) {
  check_horizons(ctx, reg);
  ConfirmatoryRuns out;
  out.copy = run_training(ctx, kCopyConfigV4, task_runs(reg, "copy", selected), "copy");
  out.text = run_training(ctx, kTextConfigV4, task_runs(reg, "text", selected), "text");
  apply_divergence_rules(ctx, out);
  return out;
}

std::string confirmatory_status(const Registration& reg, const ConfirmatoryRuns& runs,
                                const std::function<bool(const std::string&)>& selected) {
  std::vector<std::vector<std::string>> rows;
  for (const RegisteredClaim& c : reg.claims) {
    if (c.task == "init" || !selected(c.id)) continue;
    const TrainingResults& results = c.task == "text" ? runs.text : runs.copy;
    int completed = 0, diverged = 0, failed = 0, missing = 0;
    for (const TrainPoint& p : reg.runs_of(c)) {
      const RunOutcome* r = results.find(p);
      const RunStatus s = r ? r->status : RunStatus::Missing;
      completed += s == RunStatus::Completed;
      diverged += s == RunStatus::Diverged;
      failed += s == RunStatus::Failed;
      missing += s != RunStatus::Completed && s != RunStatus::Diverged && s != RunStatus::Failed;
    }
    rows.push_back({c.id, c.family, fmt::format("{}", fmt::join(c.arms, "; ")), std::to_string(c.seeds),
                    std::to_string(c.steps), std::to_string(completed), std::to_string(diverged),
                    std::to_string(failed), std::to_string(missing)});
  }
  return md_table({"claim", "family", "arms", "seeds", "steps", "completed", "diverged", "failed", "missing"}, rows);
}

}  // namespace normlab::xiong
