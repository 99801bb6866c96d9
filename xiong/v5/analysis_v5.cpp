#include "xiong/v5/analysis_v5.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/files.h"
#include "data/bleu.h"
#include "data/bleu_bootstrap.h"
#include "stats/exact_tests.h"
#include "stats/stats.h"
#include "xiong/record_table.h"

namespace fs = std::filesystem;

namespace normlab::xiong {

namespace {

constexpr const char* kOp = "xiong-v5 analysis";

void read_runs(const fs::path& path, RecordV5& record) {
  const RecordTable t(path, {"run", "arm", "seed", "status", "test_bleu", "test_bleu_last", "epochs_done",
                             "best_epoch", "started_utc", "finished_utc", "commit", "code_crc32", "cpu"});
  for (size_t i = 0; i < t.size(); ++i) {
    RecordRunV5 r;
    r.run = t.text(i, "run");
    r.arm = t.text(i, "arm");
    r.seed = static_cast<int>(t.integer(i, "seed"));
    r.status = t.text(i, "status");
    NL_CHECK(r.status == "completed" || r.status == "diverged", kOp, "{}:{}: column 'status' holds '{}', not "
             "completed or diverged", t.path(), t.line(i), r.status);
    r.test_bleu = t.has(i, "test_bleu") ? t.number(i, "test_bleu") : NAN;
    r.test_bleu_last = t.has(i, "test_bleu_last") ? t.number(i, "test_bleu_last") : NAN;
    NL_CHECK(r.status == "diverged" || (std::isfinite(r.test_bleu) && std::isfinite(r.test_bleu_last)), kOp,
             "{}:{}: a completed run without test_bleu and test_bleu_last", t.path(), t.line(i));
    r.epochs_done = t.integer(i, "epochs_done");
    r.best_epoch = t.has(i, "best_epoch") ? t.integer(i, "best_epoch") : 0;
    r.started_utc = t.text(i, "started_utc");
    r.finished_utc = t.text(i, "finished_utc");
    r.commit = t.text(i, "commit");
    r.code_crc32 = t.text(i, "code_crc32");
    r.cpu = t.text(i, "cpu");
    record.runs.push_back(std::move(r));
  }
}

void read_curves(const fs::path& path, RecordV5& record) {
  const RecordTable t(path, {"run", "epoch", "val_loss", "val_bleu"});
  for (size_t i = 0; i < t.size(); ++i) {
    std::vector<CurvePointV5>& curve = record.curves[t.text(i, "run")];
    const int64_t epoch = t.integer(i, "epoch");
    NL_CHECK(curve.empty() || epoch > curve.back().epoch, kOp, "{}:{}: epoch {} of '{}' does not follow epoch {}",
             t.path(), t.line(i), epoch, t.text(i, "run"), curve.empty() ? 0 : curve.back().epoch);
    curve.push_back({epoch, t.number(i, "val_loss"), t.number(i, "val_bleu")});
  }
}

void read_init(const fs::path& path, RecordV5& record) {
  const RecordTable t(path, {"arm", "seed", "stack", "weight", "layer", "norm_of_mean"});
  for (size_t i = 0; i < t.size(); ++i)
    record.init.push_back({t.text(i, "arm"), t.text(i, "stack"), t.text(i, "weight"),
                           static_cast<int>(t.integer(i, "seed")), static_cast<int>(t.integer(i, "layer")),
                           t.number(i, "norm_of_mean")});
}

// The least-squares slope of ln(norm) against the layer index, or NaN with fewer than 2 layers.
double log_slope(const std::vector<std::pair<int, double>>& layer_norms) {
  if (layer_norms.size() < 2) return NAN;
  double mx = 0, my = 0;
  for (const auto& [l, v] : layer_norms) mx += l, my += std::log(v);
  mx /= static_cast<double>(layer_norms.size()), my /= static_cast<double>(layer_norms.size());
  double sxy = 0, sxx = 0;
  for (const auto& [l, v] : layer_norms) sxy += (l - mx) * (std::log(v) - my), sxx += (l - mx) * (l - mx);
  return sxy / sxx;
}

const RecordRunV5* confirmatory_run(const RecordV5& record, const std::string& arm, int seed) {
  for (const RecordRunV5& r : record.runs)
    if (r.refused.empty() && r.arm == arm && r.seed == seed) return &r;
  return nullptr;
}

// One seed's number for the claim from one arm's run (nullopt when the run is missing).
std::optional<double> arm_value(const RegistrationV5& reg, const RecordV5& record, const ClaimV5& c,
                                const std::string& arm, int seed, bool last_weights) {
  const RecordRunV5* run = confirmatory_run(record, arm, seed);
  if (!run) return std::nullopt;
  if (c.quantity == QuantityV5::EpochsToThreshold) {
    const auto it = record.curves.find(run->run);
    return epochs_to_threshold(reg, *run, it == record.curves.end() ? std::vector<CurvePointV5>{} : it->second);
  }
  if (run->status == "diverged") return reg.diverged_bleu;
  return last_weights ? run->test_bleu_last : run->test_bleu;
}

std::optional<double> init_slope(const RecordV5& record, const ClaimV5& c, int seed) {
  std::vector<std::pair<int, double>> layers;
  for (const InitRowV5& row : record.init)
    if (row.arm == c.compared_arm && row.seed == seed && row.stack == c.stack && row.weight == c.weight)
      layers.emplace_back(row.layer, row.norm_of_mean);
  const double slope = log_slope(layers);
  if (!std::isfinite(slope)) return std::nullopt;
  return slope;
}

double one_sided_p_above(const std::vector<double>& values, double null_value) {
  const stats::Interval m = stats::mean_interval(values);
  const double se = (m.high - m.estimate) / stats::t_quantile_975(m.n - 1);
  if (!(se > 0)) return m.estimate > null_value ? 0.0 : 1.0;
  const double t = (m.estimate - null_value) / se;
  const double two = stats::t_two_sided_p(t, m.n - 1);
  return t > 0 ? two / 2 : 1 - two / 2;
}

// The registered rule on `values` (p from the primary test, before Holm).
std::string decide(const ClaimV5& c, const std::vector<double>& values, double p_adjusted, double alpha) {
  if (static_cast<int>(values.size()) < c.seeds) return "incomplete";
  const stats::Interval i90 = stats::mean_interval_at(values, 0.90), i95 = stats::mean_interval_at(values, 0.95);
  switch (c.decision) {
    case DecisionV5::MinimumEffect:
      return p_adjusted < alpha ? "reproduced" : i90.high < c.sesoi ? "contradicted" : "inconclusive";
    case DecisionV5::NonInferiority:
      return p_adjusted < alpha ? "reproduced" : i90.high < -c.sesoi ? "contradicted" : "inconclusive";
    case DecisionV5::Equivalence:
      if (i90.low >= c.low && i90.high <= c.high) return "reproduced";
      return i95.high < c.low || i95.low > c.high ? "contradicted" : "inconclusive";
  }
  return "inconclusive";
}

double primary_p(const ClaimV5& c, const std::vector<double>& values) {
  if (values.size() < 2) return NAN;
  switch (c.decision) {
    case DecisionV5::MinimumEffect: return one_sided_p_above(values, c.sesoi);
    case DecisionV5::NonInferiority: return one_sided_p_above(values, -c.sesoi);
    case DecisionV5::Equivalence: return stats::tost_paired(values, c.low, c.high).p_value;
  }
  return NAN;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end = text.find('\n'); end != std::string::npos; start = end + 1, end = text.find('\n', start))
    lines.push_back(text.substr(start, end - start));
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

// The two reference streams of record/test_references.tsv ("target<TAB>second" a line).
std::vector<std::vector<std::string>> test_references(const fs::path& path) {
  std::vector<std::vector<std::string>> refs(2);
  int number = 0;
  for (const std::string& line : lines_of(read_whole_file(path, kOp))) {
    ++number;
    const size_t tab = line.find('\t');
    NL_CHECK(tab != std::string::npos, kOp, "{}:{}: no tab between the two references", path.string(), number);
    refs[0].push_back(line.substr(0, tab));
    refs[1].push_back(line.substr(tab + 1));
  }
  return refs;
}

// The pooled paired bootstrap of one test_bleu claim (see ClaimResultV5).
void pooled_bootstrap(const RecordV5& record, const ClaimV5& c, ClaimResultV5& r) {
  const fs::path refs_path = record.dir / "test_references.tsv";
  if (!fs::exists(refs_path)) return;
  const std::vector<std::vector<std::string>> refs = test_references(refs_path);
  std::vector<BleuStats> a, b;
  for (int seed : r.seeds) {
    const RecordRunV5 *ra = confirmatory_run(record, c.reference_arm, seed), *rb = confirmatory_run(record, c.compared_arm, seed);
    const fs::path ha = record.dir / "hypotheses" / (ra->run + ".txt"), hb = record.dir / "hypotheses" / (rb->run + ".txt");
    if (!fs::exists(ha) || !fs::exists(hb)) continue;
    const std::vector<std::string> hyp_a = lines_of(read_whole_file(ha, kOp)), hyp_b = lines_of(read_whole_file(hb, kOp));
    NL_CHECK(hyp_a.size() == refs[0].size() && hyp_b.size() == refs[0].size(), kOp,
             "{} and {}: {} and {} translations for {} test references", ha.string(), hb.string(), hyp_a.size(),
             hyp_b.size(), refs[0].size());
    const std::vector<BleuStats> sa = segment_bleu_stats(hyp_a, refs), sb = segment_bleu_stats(hyp_b, refs);
    a.insert(a.end(), sa.begin(), sa.end());
    b.insert(b.end(), sb.begin(), sb.end());
  }
  if (a.empty()) return;
  const PairedBootstrap p = paired_bootstrap_bleu(a, b, 2, 1000, 12345);
  r.pooled_difference = p.difference, r.pooled_low = p.low, r.pooled_high = p.high;
}

ClaimResultV5 claim_numbers(const RegistrationV5& reg, const RecordV5& record, const ClaimV5& c) {
  ClaimResultV5 r;
  r.claim = &c;
  for (int seed : reg.seeds(c.seeds)) {
    if (c.quantity == QuantityV5::InitSlope) {
      if (const auto s = init_slope(record, c, seed)) r.seeds.push_back(seed), r.values.push_back(*s);
      continue;
    }
    const auto ref = arm_value(reg, record, c, c.reference_arm, seed, false);
    const auto cmp = arm_value(reg, record, c, c.compared_arm, seed, false);
    if (!ref || !cmp) continue;
    r.seeds.push_back(seed);
    r.values.push_back(*ref - *cmp);
    if (c.quantity == QuantityV5::TestBleu)
      r.values_last.push_back(*arm_value(reg, record, c, c.reference_arm, seed, true) -
                              *arm_value(reg, record, c, c.compared_arm, seed, true));
  }
  const stats::Interval i95 = stats::mean_interval_at(r.values, 0.95), i90 = stats::mean_interval_at(r.values, 0.90);
  r.estimate = i95.estimate, r.low95 = i95.low, r.high95 = i95.high, r.low90 = i90.low, r.high90 = i90.high;
  r.p = primary_p(c, r.values);
  r.sign_flip_p = r.values.empty() ? NAN : stats::sign_flip_test(r.values).p_value;
  r.median = r.values.empty() ? NAN : stats::median_of(r.values);
  if (c.quantity == QuantityV5::TestBleu) pooled_bootstrap(record, c, r);
  return r;
}

}  // namespace

RecordV5 read_record_v5(const fs::path& dir) {
  RecordV5 record;
  record.dir = dir;
  read_runs(dir / "runs.csv", record);
  read_curves(dir / "val_curves.csv", record);
  if (fs::exists(dir / "init_profile.csv")) read_init(dir / "init_profile.csv", record);
  const fs::path frozen_path = dir / "frozen_build.json";
  if (fs::exists(frozen_path)) {
    const nlohmann::json frozen = nlohmann::json::parse(read_whole_file(frozen_path, kOp), nullptr, false);
    NL_CHECK(frozen.is_object() && frozen.contains("commit") && frozen["commit"].is_string(), kOp,
             "{}: no string \"commit\"", frozen_path.string());
    record.frozen_commit = frozen["commit"].get<std::string>();
  }
  return record;
}

void classify_runs(const RegistrationV5& reg, const std::string& registered_utc, RecordV5& record) {
  const auto& seeds = reg.confirmatory_seeds;
  for (RecordRunV5& r : record.runs) {
    if (std::find(seeds.begin(), seeds.end(), r.seed) == seeds.end())
      r.refused = fmt::format("seed {} is not a confirmatory seed", r.seed);
    else if (record.frozen_commit.empty())
      r.refused = "the record names no frozen build";
    else if (r.commit != record.frozen_commit)
      r.refused = fmt::format("made by commit {}, not the frozen {}", r.commit, record.frozen_commit);
    else if (!(r.started_utc > registered_utc))
      r.refused = fmt::format("started {}, not after the registration ({})", r.started_utc, registered_utc);
    else
      r.refused.clear();
  }
}

double epochs_to_threshold(const RegistrationV5& reg, const RecordRunV5& run, const std::vector<CurvePointV5>& curve) {
  const double never = static_cast<double>(reg.epochs + 1);
  if (run.status == "diverged") return never;
  for (const CurvePointV5& p : curve)
    if (p.epoch <= reg.epochs && p.val_bleu >= reg.threshold_val_bleu) return static_cast<double>(p.epoch);
  return never;
}

std::vector<ClaimResultV5> analyse_v5(const RegistrationV5& reg, const RecordV5& record) {
  std::vector<ClaimResultV5> results;
  for (const ClaimV5& c : reg.claims) results.push_back(claim_numbers(reg, record, c));
  std::map<std::string, std::vector<size_t>> families;
  for (size_t i = 0; i < results.size(); ++i) families[results[i].claim->family].push_back(i);
  for (const auto& [family, members] : families) {
    std::vector<double> ps;
    for (size_t i : members) ps.push_back(results[i].p);
    const std::vector<double> adjusted = stats::holm_adjust(ps);
    for (size_t k = 0; k < members.size(); ++k) results[members[k]].p_holm = adjusted[k];
  }
  for (ClaimResultV5& r : results) {
    r.verdict = decide(*r.claim, r.values, r.p_holm, reg.alpha);
    // The last weights: the same rule, the primary p unadjusted (a statistic beside the verdict).
    if (!r.values_last.empty()) r.verdict_last = decide(*r.claim, r.values_last, primary_p(*r.claim, r.values_last), reg.alpha);
  }
  return results;
}

}  // namespace normlab::xiong
