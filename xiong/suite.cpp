#include "xiong/suite.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <functional>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/backend.h"
#include "core/error.h"
#include "core/files.h"
#include "io/atomic_file.h"
#include "io/directory_lock.h"
#include "xiong/arms.h"
#include "xiong/claims.h"
#include "xiong/confirmatory.h"
#include "xiong/e3_common.h"
#include "xiong/experiments.h"
#include "xiong/front_door.h"
#include "xiong/outcomes.h"
#include "xiong/run_record.h"
#include "xiong/sensitivity_audit.h"
#include "xiong/torch_check.h"

namespace fs = std::filesystem;

namespace normlab::xiong {

namespace {

const std::vector<std::string> kExperiments = {"E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "E9", "E10"};

// Copies every *.toml of the config directory into out/configs (the report quotes these).
void copy_configs(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  for (const auto& entry : fs::directory_iterator(from))
    if (entry.path().extension() == ".toml" || entry.path().extension() == ".md")
      write_file_atomic((to / entry.path().filename()).string(), read_whole_file(entry.path(), "reproduce"));
}

// Holm's adjustment over every claim that has a p-value (direction claims), in verdict order;
// NaN for the others.
std::vector<double> holm_of(const std::vector<Section>& sections) {
  std::vector<double> p;
  for (const Section& s : sections)
    for (const Verdict& v : s.verdicts) p.push_back(v.p_value());
  return holm_adjust(p);
}

std::string family_wise(const Verdict& v, double holm_p) {
  if (!std::isfinite(holm_p)) return "-";
  return v.verdict != "inconclusive" && holm_p < 0.05 ? "holds" : "not at 5%";
}

std::string verdict_table(const std::vector<Section>& sections) {
  const std::vector<double> holm = holm_of(sections);
  std::vector<std::vector<std::string>> rows;
  size_t k = 0;
  for (const Section& s : sections)
    for (const Verdict& v : s.verdicts) {
      const double p = v.p_value(), h = holm[k++];
      rows.push_back({v.id, v.task.empty() ? "init" : v.task, v.claim, v.paper, v.quantity, interval_text(v.estimate),
                      fmt::format("{}{}", v.estimate.n, v.steps > 0 ? fmt::format(" x {} steps", v.steps) : ""),
                      "**" + v.verdict + "**", num(p, 2), num(h, 2), family_wise(v, h)});
    }
  return md_table({"id", "task", "claim", "paper", "our estimate of", "estimate [95% CI]", "n", "verdict", "p",
                   "Holm p", "family-wise"}, rows);
}

std::string criteria_list(const std::vector<Section>& sections) {
  std::string md;
  for (const Section& s : sections)
    for (const Verdict& v : s.verdicts)
      md += fmt::format("- **{}** ({} interval): {}{}.\n", v.id, v.estimate.method, v.criterion,
                        v.note.empty() ? "" : "; " + v.note);
  return md;
}

// The claims not reproduced, and the measured explanations of docs in differences.md (if present).
std::string differences(const Context& ctx, const std::vector<Section>& sections) {
  std::string md = "## Where we differ from the paper\n\n" + not_reproduced_sentence(sections) + "\n\n";
  const fs::path notes = ctx.config_dir / "differences.md";
  if (!ctx.grids.quick && fs::exists(notes)) md += read_whole_file(notes, "reproduce") + "\n";
  return md;
}

nlohmann::json verdicts_json(const std::vector<Section>& sections) {
  const std::vector<double> holm = holm_of(sections);
  nlohmann::json out = nlohmann::json::array();
  size_t k = 0;
  for (const Section& s : sections)
    for (const Verdict& v : s.verdicts) {
      nlohmann::json j = v.to_json();
      const double h = holm[k++];
      j["p_holm"] = std::isfinite(h) ? nlohmann::json(h) : nlohmann::json(nullptr);
      j["family_wise"] = family_wise(v, h);
      out.push_back(j);
    }
  return out;
}

std::string configs_appendix(const Context& ctx, const std::vector<std::string>& files) {
  std::string md = "## Configurations\n\nGrids (`normlab reproduce xiong" + std::string(ctx.grids.quick ? " --quick" : "") +
                   "`):\n\n";
  for (const std::string& line : describe_grids(ctx.grids)) md += "- " + line + "\n";
  md += "\nEach training run is `normlab train CONFIG` with the overrides model.norm_placement, model.norm_type, "
        "optim.name, optim.lr, schedule.warmup_steps, train.seed and model.seed (see each sweep's sweep.csv); "
        "the run directories hold the resolved config.toml, metrics.jsonl and summary.json.\n\n";
  for (const std::string& f : files) {
    if (f.empty()) continue;
    const fs::path p = ctx.config_dir / f;
    if (fs::exists(p)) md += fmt::format("`xiong/configs/{}`:\n\n```toml\n{}```\n\n", f, read_whole_file(p, "reproduce"));
  }
  return md;
}

}  // namespace

std::string find_config_dir(const std::string& given) {
  if (!given.empty()) {
    NL_CHECK(fs::exists(fs::path(given) / "theorem1.toml"), "reproduce",
             "'{}' has no theorem1.toml: give the xiong/configs directory of the normlab source tree", given);
    return given;
  }
  std::vector<fs::path> candidates = {fs::current_path() / "xiong" / "configs"};
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    candidates.push_back(self.parent_path().parent_path() / "xiong" / "configs");
    candidates.push_back(self.parent_path().parent_path().parent_path() / "xiong" / "configs");
  }
  std::vector<std::string> tried;
  for (const fs::path& c : candidates) {
    if (fs::exists(c / "theorem1.toml")) return c.lexically_normal().string();
    tried.push_back(c.lexically_normal().string());
  }
  fail("reproduce", "cannot find the suite's configs (theorem1.toml) in {}; run from the source tree or pass "
       "--configs DIR", fmt::join(tried, ", "));
}

namespace {

void check_options(const SuiteOptions& options) {
  NL_CHECK(options.confirmatory || !options.analyse_only || !options.record_dir.empty(), "reproduce",
           "--analyse-only needs --confirmatory (the runs in DIR) or --record DIR");
  NL_CHECK(!options.confirmatory || options.analyse_only || options.record_dir.empty(), "reproduce",
           "--confirmatory --record needs --analyse-only");
  NL_CHECK(!(options.quick && !options.record_dir.empty()), "reproduce", "--record holds the full design's runs: drop --quick");
  NL_CHECK(!(options.confirmatory && options.quick), "reproduce", "--confirmatory runs the registered design: "
           "drop --quick");
  NL_CHECK(options.jobs >= 1, "reproduce", "--jobs must be >= 1, got {}", options.jobs);
}

fs::path suite_out_dir(const SuiteOptions& options) {
  if (!options.out_dir.empty()) return fs::absolute(options.out_dir);
  if (options.confirmatory) return fs::absolute("runs/xiong-v4");
  if (options.analyse_only) return fs::absolute("runs/xiong-record");  // never a trained suite's report
  return fs::absolute(options.quick ? "runs/xiong-quick" : "runs/xiong");
}

// The suite's output folders, its configs copied beside the results, and the grids to run.
Context make_context(const SuiteOptions& options) {
  Context ctx;
  ctx.grids = make_grids(options.quick);
  ctx.out_dir = suite_out_dir(options);
  ctx.config_dir = ctx.out_dir / "configs";
  ctx.figures_dir = ctx.out_dir / "figures";
  ctx.jobs = options.jobs;
  ctx.normlab_binary = options.normlab_binary;
  ctx.quiet = options.quiet;
  ctx.record_dir = options.record_dir;
  ctx.train_absent = !options.analyse_only;
  fs::create_directories(ctx.out_dir);
  const std::string source_configs = find_config_dir(options.config_dir);
  ctx.source_dir = fs::path(source_configs).parent_path().parent_path();
  copy_configs(source_configs, ctx.config_dir);
  return ctx;
}

// --analyse-only: the configs of the source tree, the results where they are; nothing written but
// confirmatory.md.
Context analysis_context(const SuiteOptions& options) {
  Context ctx;
  ctx.grids = make_grids(false);
  ctx.out_dir = suite_out_dir(options);
  if (!options.record_dir.empty()) fs::create_directories(ctx.out_dir);
  NL_CHECK(fs::is_directory(ctx.out_dir), "reproduce", "--analyse-only: no confirmatory runs in '{}'", ctx.out_dir.string());
  ctx.config_dir = find_config_dir(options.config_dir);
  ctx.figures_dir = ctx.out_dir / "figures";
  ctx.source_dir = ctx.config_dir.parent_path().parent_path();
  ctx.quiet = options.quiet;
  return ctx;
}

struct SuiteResults {
  std::vector<Section> sections;  // sorted by id
  size_t n_runs = 0;
  double run_minutes = 0;
};

// Training claims that do not name their task and schedule (E4-E8 compare arms of the copy task's
// primary design) get them here: every training verdict in verdicts.json has both.
void label_training_claims(const Context& ctx, std::vector<Section>& sections) {
  const Grids& g = ctx.grids;
  auto words_of = [&](int64_t warmup) {
    return schedule_words(point_config(ctx.config_path(g.copy_config), e3_arm("post", g.slice_lr, warmup)).schedule);
  };
  const std::string words = fmt::format("Adam, primary design; no warmup: {}; long warmup: {}", words_of(1),
                                        words_of(g.warmup_steps("long")));
  for (Section& s : sections)
    for (Verdict& v : s.verdicts)
      if (v.steps > 0 && v.task.empty()) {
        v.task = "copy";
        v.schedule = words;
      }
}

// The probes (E1, E2 and their PyTorch check), then every selected training grid as one sweep per
// task, then the sections that read those runs.
SuiteResults run_sections(const Context& ctx, const ClaimSelection& only) {
  auto selected = [&](const std::string& experiment) { return only.runs_experiment(experiment); };
  const Grids& g = ctx.grids;
  SuiteResults r;
  if (selected("E1")) r.sections.push_back(run_e1(ctx));
  if (selected("E2")) r.sections.push_back(run_e2(ctx));
  if (selected("E1") || selected("E2")) r.sections.push_back(run_torch_check(ctx));

  std::vector<TrainPoint> copy_points, text_points;
  auto append = [&](const std::vector<TrainPoint>& more) { copy_points.insert(copy_points.end(), more.begin(), more.end()); };
  if (selected("E3")) {
    append(e3_points_for_claims(g, only, e3_points(g), true));
    text_points = e3_points_for_claims(g, only, e3_text_points(g), false);
  }
  if (selected("E4")) append(e4_points(g));
  if (selected("E5")) append(e5_points(g));
  if (selected("E6")) append(e6_points(g));
  if (selected("E7")) append(e7_points(g));
  if (selected("E8")) append(e8_points(g));
  TrainingResults copy = run_training(ctx, g.copy_config, copy_points, "copy");
  copy.apply_divergence_rule(copy_baseline(ctx).diverge_above, Baseline::kDivergenceAfter);
  TrainingResults text;
  if (!text_points.empty()) {
    text = run_training(ctx, g.text_config, text_points, "text");
    text.apply_divergence_rule(text_baseline(ctx).diverge_above, Baseline::kDivergenceAfter);
  }

  if (selected("E3")) r.sections.push_back(run_e3(ctx, copy, text));
  if (selected("E4")) r.sections.push_back(run_e4(ctx, copy));
  if (selected("E5")) r.sections.push_back(run_e5(ctx, copy, true));
  if (selected("E6")) r.sections.push_back(run_e6(ctx, copy, true));
  if (selected("E7")) r.sections.push_back(run_e7(ctx, copy));
  if (selected("E8")) r.sections.push_back(run_e8(ctx, copy));
  TrainingResults e9;
  if (selected("E9")) {
    e9 = run_training(ctx, g.e9_config, e9_points(g), "e9");
    e9.apply_divergence_rule(copy_baseline(ctx.config_path(g.e9_config)).diverge_above, Baseline::kDivergenceAfter);
    r.sections.push_back(run_e9(ctx, e9));
  }
  TrainingResults e10_translate, e10_mlm;
  if (selected("E10")) {
    e10_translate = run_training(ctx, g.e10_translate_config, e10b_points(g), "e10_translate");
    e10_translate.apply_divergence_rule(translation_baseline(ctx.config_path(g.e10_translate_config)).diverge_above,
                                        Baseline::kDivergenceAfter);
    e10_mlm = run_training(ctx, g.e10_mlm_config, e10c_points(g), "e10_mlm");
    e10_mlm.apply_divergence_rule(copy_baseline(ctx.config_path(g.e10_mlm_config)).diverge_above,
                                  Baseline::kDivergenceAfter);
    r.sections.push_back(run_e10(ctx, e10_translate, e10_mlm));
  }
  label_training_claims(ctx, r.sections);
  std::sort(r.sections.begin(), r.sections.end(), [](const Section& a, const Section& b) { return a.id < b.id; });
  r.n_runs = copy.size() + text.size() + e9.size() + e10_translate.size() + e10_mlm.size();
  r.run_minutes = (copy.total_wall_s() + text.total_wall_s() + e9.total_wall_s() + e10_translate.total_wall_s() +
                   e10_mlm.total_wall_s()) / 60.0;
  return r;
}

std::string report_header(const SuiteOptions& options, const ClaimSelection& only, const Grids& g,
                          const SuiteResults& r, double wall_s) {
  std::string md;
  md += "# Reproducing Xiong et al. 2020, *On Layer Normalization in the Transformer Architecture*\n\n";
  md += fmt::format("Generated by `normlab reproduce xiong{}{}{}` on {}, {} hardware threads, --jobs {}. Wall time of "
                    "this invocation: {:.1f} min (completed sweep points and cached probes are reused, so a resumed "
                    "suite takes less); {} training runs, {:.1f} min of run time in all. Every verdict below is "
                    "computed from the measurements by the stated criterion; nothing is written in advance.\n\n"
                    "**Statistics.** Every estimate comes with a 95% confidence interval over seeds (Student t over "
                    "the seeds' values, over the per-seed differences when two arms share a seed, i.e. the same "
                    "initialization and data stream, or a percentile bootstrap over seeds for fitted exponents and "
                    "slopes; the method is named with each criterion). A claim of an effect is *reproduced* when the "
                    "interval of the predicted effect excludes no effect on the predicted side, *contradicted* when it "
                    "excludes it on the other side, and *inconclusive* otherwise; a claim of equality (a flat "
                    "profile, a value of 1.5) is reproduced when the interval lies inside the stated margin, "
                    "contradicted when it lies wholly outside. Times to a quality are Kaplan-Meier medians (runs that "
                    "never get there are censored), compared by a bootstrap of their ratio and a log-rank test.\n\n"
                    "**Multiplicity.** Each verdict is decided at 95% on its own. Beside it: the two-sided p-value of "
                    "the direction claims (from the t interval, or the log-rank test), Holm's adjustment over all of "
                    "them, and *family-wise*: *holds* when the verdict is decided and its Holm p is below 0.05, i.e. it "
                    "survives a 5% family-wise error rate over the whole table (equivalence and bootstrap claims have "
                    "no p-value here and are not in the family).\n\n",
                    g.quick ? " --quick" : "",
                    options.record_dir.empty() ? "" : fmt::format("{} --record {}", options.analyse_only ? " --analyse-only" : "",
                                                                  options.record_dir),
                    only.everything() ? "" : " --only " + only.text(), now_text(),
                    std::thread::hardware_concurrency(), options.jobs, wall_s / 60.0, r.n_runs, r.run_minutes);
  if (g.quick)
    md += "**--quick**: small models, few seeds and steps; the grid is in the appendix. The full suite "
          "(`normlab reproduce xiong`) is the reference.\n\n";
  return md;
}

// With claim tokens in --only: only the selected verdicts are kept. Returns whether any token was a claim.
bool keep_selected_claims(const ClaimSelection& only, std::vector<Section>& sections) {
  if (!only.names_claims()) return false;
  for (Section& s : sections)
    std::erase_if(s.verdicts, [&](const Verdict& v) { return !only.selects(v.id); });
  return true;
}

// The claims' rows rewritten in out_dir's verdicts.json and in report.md's verdict table (Holm's
// adjustment recomputed over the merged table); a missing report gets a report of these claims.
std::string rewrite_claim_rows(const Context& ctx, const std::vector<Section>& sections) {
  std::vector<Verdict> fresh;
  for (const Section& s : sections) fresh.insert(fresh.end(), s.verdicts.begin(), s.verdicts.end());
  const fs::path json_path = ctx.out_dir / "verdicts.json", report = ctx.out_dir / "report.md";
  nlohmann::json old = nullptr;
  if (fs::exists(json_path)) old = nlohmann::json::parse(read_whole_file(json_path, "reproduce"), nullptr, false);
  const std::vector<Section> merged = {Section{"", "", "", merge_verdicts(old, fresh)}};
  const std::string table = "## Verdicts\n\n" + verdict_table(merged) + "\nCriteria:\n\n" + criteria_list(merged) + "\n";
  std::string md = fs::exists(report) ? read_whole_file(report, "reproduce") : "";
  const size_t start = md.find("## Verdicts\n"), end = start == std::string::npos ? start : md.find("\n## E", start);
  if (start == std::string::npos) md = table;
  else md.replace(start, end == std::string::npos ? std::string::npos : end + 1 - start, table);
  write_file_atomic(json_path.string(), verdicts_json(merged).dump(1) + "\n");
  write_file_atomic(report.string(), md);
  ctx.log(fmt::format("rewrote {} claim row(s) in {}", fresh.size(), report.string()));
  return report.string();
}

// --confirmatory: the registered runs of the selected claims; every --only token must name a
// registered claim (or a prefix of one), so that nothing unregistered is trained as confirmatory.
std::string run_confirmatory_suite(const Context& ctx, const SuiteOptions& options, const ClaimSelection& only) {
  const Registration reg = load_registration((ctx.source_dir / "xiong" / "registration.toml").string());
  std::vector<std::string> ids;
  for (const RegisteredClaim& c : reg.claims) ids.push_back(c.id);
  const std::vector<std::string> unmatched = only.unmatched(ids);
  NL_CHECK(unmatched.empty(), "reproduce", "--only {}: no registered claim matches it in {}",
           unmatched.empty() ? "" : unmatched.front(), reg.path);
  auto selected = [&](const std::string& id) { return only.selects(id); };
  const ConfirmatoryRuns runs = !options.record_dir.empty() ? read_confirmatory_record(ctx, reg, options.record_dir)
                                : options.analyse_only      ? read_confirmatory(ctx, reg)
                                                            : run_confirmatory(ctx, reg, selected);
  const std::string md = confirmatory_report(ctx, reg, runs, selected);
  const fs::path out = ctx.out_dir / "confirmatory.md";
  write_file_atomic(out.string(), md);
  ctx.log(fmt::format("confirmatory runs: {}", out.string()));
  const fs::path front_door = ctx.out_dir / "front_door.md";  // for docs/xiong/README.md and the root README
  write_file_atomic(front_door.string(), front_door_text(ctx, reg, runs, ""));
  ctx.log(fmt::format("the front-door table: {}", front_door.string()));
  return out.string();
}

}  // namespace

std::string run_xiong_suite(const SuiteOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  check_options(options);
  // Probes and timings run on one thread: OpenMP threads that spin while other processes (the
  // sweeps' runs, other jobs) hold the cores make small models many times slower.
  set_num_threads(1);
  const ClaimSelection only(options.only, kExperiments);  // --only, parsed once
  if (options.analyse_only && options.confirmatory)
    return run_confirmatory_suite(analysis_context(options), options, only);
  // One suite per directory: --only rewrites report.md and verdicts.json from what they hold, so a
  // second writer could lose the first one's rows.
  fs::create_directories(suite_out_dir(options));
  const DirectoryLock lock(suite_out_dir(options), "reproduce");
  const Context ctx = make_context(options);
  if (options.confirmatory) return run_confirmatory_suite(ctx, options, only);
  const Grids& g = ctx.grids;
  SuiteResults r = run_sections(ctx, only);
  if (keep_selected_claims(only, r.sections)) return rewrite_claim_rows(ctx, r.sections);

  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string md = report_header(options, only, g, r, wall);
  md += "## Verdicts\n\n" + verdict_table(r.sections) + "\nCriteria:\n\n" + criteria_list(r.sections) + "\n";
  for (const Section& s : r.sections) md += fmt::format("## {}: {}\n\n{}\n", s.id, s.title, s.markdown);
  md += differences(ctx, r.sections);
  md += configs_appendix(ctx, {g.probe_config, g.amp_config, g.copy_config, g.text_config});
  const fs::path report = ctx.out_dir / "report.md";
  write_file_atomic((ctx.out_dir / "verdicts.json").string(), verdicts_json(r.sections).dump(1) + "\n");
  write_file_atomic(report.string(), md);
  ctx.log(fmt::format("report: {} ({:.1f} min)", report.string(), wall / 60.0));
  return report.string();
}

}  // namespace normlab::xiong
