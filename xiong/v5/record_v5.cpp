#include "xiong/v5/record_v5.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/files.h"
#include "io/atomic_file.h"
#include "io/csv.h"
#include "config/config.h"
#include "data/translation_corpus.h"
#include "train/run_dir.h"

namespace fs = std::filesystem;

namespace normlab::xiong {

namespace {

constexpr const char* kOp = "xiong-v5 record";

// "<arm>,seed=<n>" of a registered arm, else nullopt.
std::optional<std::pair<std::string, int>> parse_run_name(const RegistrationV5& reg, const std::string& name) {
  const size_t comma = name.rfind(",seed=");
  if (comma == std::string::npos) return std::nullopt;
  const std::string arm = name.substr(0, comma), seed = name.substr(comma + 6);
  if (seed.empty() || seed.find_first_not_of("0123456789") != std::string::npos || seed.size() > 9) return std::nullopt;
  for (const ArmV5& a : reg.arms)
    if (a.id == arm) return std::pair{arm, std::stoi(seed)};
  return std::nullopt;
}

std::string text_of(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "";
  if (j[key].is_string()) return j[key].get<std::string>();
  if (j[key].is_number_float()) return csv_number(j[key].get<double>());
  return j[key].dump();
}

const std::vector<std::string> kRunColumns = {
    "run", "arm", "seed", "status", "reason", "steps_done", "epochs_done", "best_epoch", "best_val_loss",
    "test_checkpoint", "test_bleu", "test_chrf", "test_bleu_last", "test_chrf_last", "test_bleu_signature",
    "started_utc", "finished_utc", "commit", "code_crc32", "cpu", "threads", "sittings", "one_build_one_cpu",
    "fp32_gemm", "fingerprint"};
const std::vector<std::string> kCurveColumns = {"run", "arm", "seed", "epoch", "step", "lr",
                                                "train_loss", "val_loss", "val_bleu", "val_chrf"};

// The run's config fingerprint (fingerprint.txt without its line break), "" without one.
std::string fingerprint_of(const fs::path& dir) {
  if (!fs::exists(dir / "fingerprint.txt")) return "";
  std::string text = read_whole_file(dir / "fingerprint.txt", kOp);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

struct RunRows {
  std::string run_row, curve_rows;
};

RunRows rows_of(const fs::path& dir, const nlohmann::json& summary, const std::string& arm, int seed) {
  const std::string run = dir.filename().string();
  const nlohmann::json sittings = summary.value("sittings", nlohmann::json::array());
  NL_CHECK(sittings.is_array() && !sittings.empty(), kOp, "'{}' names no sittings: not made by a build that records "
           "its provenance", (dir / run_files::kSummary).string());
  const nlohmann::json& first = sittings.front();
  RunRows out;
  int64_t epochs_done = 0;
  for (const nlohmann::json& m : read_metrics(dir / run_files::kMetrics)) {
    if (!m.contains("epoch")) continue;
    epochs_done = m["epoch"].get<int64_t>();
    out.curve_rows += csv_line({run, arm, std::to_string(seed), text_of(m, "epoch"), text_of(m, "step"), text_of(m, "lr"),
                                text_of(m, "train_loss"), text_of(m, "val_loss"), text_of(m, "val_bleu"),
                                text_of(m, "val_chrf")});
  }
  nlohmann::json best = nlohmann::json::object();
  if (fs::exists(dir / "best.json")) best = nlohmann::json::parse(read_whole_file(dir / "best.json", kOp), nullptr, false);
  const nlohmann::json kernels = summary.value("cpu_kernels", nlohmann::json::object());
  out.run_row = csv_line(
      {run, arm, std::to_string(seed), text_of(summary, "status"), text_of(summary, "reason"),
       text_of(summary, "steps_done"), std::to_string(epochs_done), best.is_object() ? text_of(best, "epoch") : "",
       text_of(summary, "best_val_loss"), text_of(summary, "test_checkpoint"), text_of(summary, "test_bleu"),
       text_of(summary, "test_chrf"), text_of(summary, "test_bleu_last"), text_of(summary, "test_chrf_last"),
       text_of(summary, "test_bleu_signature"), text_of(summary, "started_utc"), text_of(summary, "finished_utc"),
       text_of(first, "commit"), text_of(first, "code_crc32"), text_of(first, "cpu"), text_of(first, "threads"),
       std::to_string(sittings.size()), text_of(summary, "one_build_one_cpu"), text_of(kernels, "fp32_gemm"),
       fingerprint_of(dir)});
  return out;
}

// The test split's two references, "target<TAB>second" a line, from the corpus the run trained on
// (its config's data.source "corpus:DIR", checked against its manifest): the pooled bootstrap needs them.
std::string test_references_of(const fs::path& run_dir) {
  const RunConfig c = load_config((run_dir / run_files::kConfig).string(), {});
  NL_CHECK(c.data.source.rfind("corpus:", 0) == 0, kOp, "'{}': data.source \"{}\" is not a corpus", run_dir.string(),
           c.data.source);
  std::string text;
  for (const CorpusPair& p : load_translation_corpus(c.data.source.substr(7)).test) text += p.target + "\t" + p.second + "\n";
  return text;
}

// A finished run's summary (completed or diverged), or null for a run without one or still under way.
nlohmann::json finished_summary(const fs::path& dir) {
  if (!fs::exists(dir / run_files::kSummary)) return nullptr;
  const nlohmann::json summary = nlohmann::json::parse(read_whole_file(dir / run_files::kSummary, kOp), nullptr, false);
  NL_CHECK(summary.is_object(), kOp, "'{}' is not a JSON object", (dir / run_files::kSummary).string());
  const std::string status = summary.value("status", "");
  return status == "completed" || status == "diverged" ? summary : nlohmann::json();
}

}  // namespace

void write_record_v5(const RegistrationV5& reg, const fs::path& out_dir, const fs::path& record_dir) {
  fs::create_directories(record_dir / "hypotheses");
  std::vector<fs::path> dirs;
  for (const fs::directory_entry& e : fs::directory_iterator(out_dir))
    if (e.is_directory()) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  std::string runs = csv_line(kRunColumns), curves = csv_line(kCurveColumns);
  bool have_references = false;
  for (const fs::path& dir : dirs) {
    const auto name = parse_run_name(reg, dir.filename().string());
    if (!name) continue;
    const nlohmann::json summary = finished_summary(dir);
    if (summary.is_null()) continue;
    if (!have_references) {
      write_file_atomic((record_dir / "test_references.tsv").string(), test_references_of(dir));
      have_references = true;
    }
    const RunRows rows = rows_of(dir, summary, name->first, name->second);
    runs += rows.run_row;
    curves += rows.curve_rows;
    if (fs::exists(dir / run_files::kTestHypotheses))
      write_file_atomic((record_dir / "hypotheses" / (dir.filename().string() + ".txt")).string(),
                        read_whole_file(dir / run_files::kTestHypotheses, kOp));
  }
  write_file_atomic((record_dir / "runs.csv").string(), runs);
  write_file_atomic((record_dir / "val_curves.csv").string(), curves);
  for (const char* file : {"init_profile.csv", "frozen_build.json"})
    if (fs::exists(out_dir / file))
      write_file_atomic((record_dir / file).string(), read_whole_file(out_dir / file, kOp));
}

}  // namespace normlab::xiong
