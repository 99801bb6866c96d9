#include "xiong/v5/study_v5.h"

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/build_info.h"
#include "core/error.h"
#include "core/files.h"
#include "io/atomic_file.h"
#include "sweep/sweep.h"
#include "train/provenance.h"
#include "xiong/v5/init_probe_v5.h"
#include "xiong/v5/record_v5.h"

namespace fs = std::filesystem;

namespace normlab::xiong {

namespace {

constexpr const char* kOp = "xiong-v5";

// "model.norm_placement=post" as (key, value); throws naming the arm.
std::pair<std::string, std::string> split_override(const std::string& text, const std::string& arm) {
  const size_t eq = text.find('=');
  NL_CHECK(eq != std::string::npos && eq > 0, kOp, "arm '{}': override '{}' is not KEY=VALUE", arm, text);
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::vector<const ArmV5*> chosen_arms(const RegistrationV5& reg, const StudyV5Options& o) {
  const std::vector<const ArmV5*> role = reg.arms_with_role(o.exploratory ? "exploratory" : "confirmatory");
  if (o.only.empty()) return role;
  std::vector<const ArmV5*> out;
  for (const std::string& id : o.only) {
    const ArmV5& arm = reg.arm(id);
    NL_CHECK(arm.role == (o.exploratory ? "exploratory" : "confirmatory"), kOp,
             "arm '{}' is {}: {}", id, arm.role, o.exploratory ? "drop --exploratory" : "add --exploratory");
    out.push_back(&arm);
  }
  return out;
}

nlohmann::json read_frozen_build(const fs::path& path) {
  const nlohmann::json frozen = nlohmann::json::parse(read_whole_file(path, kOp), nullptr, false);
  NL_CHECK(frozen.is_object() && frozen.contains("commit") && frozen["commit"].is_string() &&
               frozen.contains("code_crc32") && frozen["code_crc32"].is_string(),
           kOp, "cannot read '{}': not a frozen_build.json (commit, code_crc32)", path.string());
  return frozen;
}

// The frozen build: OUT/frozen_build.json names the binary of the study's first invocation; every
// later invocation must be that binary (same commit and CRC-32). A record's frozen_build.json (the
// committed one, which outlives a replaced machine) must name the same commit; a binary rebuilt from
// that commit on another machine may differ in its CRC-32, which is said on stderr and recorded.
void check_frozen_build(const fs::path& out_dir, const std::string& record_dir) {
  const nlohmann::json now = current_sitting(0);
  const std::string commit = now.value("commit", "unknown"), crc = now.value("code_crc32", "unknown");
  NL_CHECK(commit != "unknown" && crc != "unknown", kOp,
           "this binary does not know its commit or CRC-32 (commit {}, CRC-32 {}): build it from a git checkout "
           "(scripts/freeze_build)", commit, crc);
  const fs::path recorded = fs::path(record_dir) / "frozen_build.json";
  if (!record_dir.empty() && fs::exists(recorded)) {
    const nlohmann::json frozen = read_frozen_build(recorded);
    NL_CHECK(frozen["commit"] == commit, kOp, "the record '{}' froze the study on commit {}; this binary is commit {}",
             recorded.string(), frozen["commit"].get<std::string>(), commit);
    if (frozen["code_crc32"] != crc)
      fmt::print(stderr, "[xiong-v5] this binary of commit {} has CRC-32 {}, the record's {}: rebuilt on another "
                 "machine; each run records its own\n", commit, crc, frozen["code_crc32"].get<std::string>());
  }
  const fs::path path = out_dir / "frozen_build.json";
  if (!fs::exists(path)) {
    const nlohmann::json frozen = {{"commit", commit}, {"code_crc32", crc}, {"code_file", now["code_file"]},
                                   {"frozen_utc", utc_now()}};
    write_file_atomic(path.string(), frozen.dump(1) + "\n");
    return;
  }
  const nlohmann::json frozen = read_frozen_build(path);
  NL_CHECK(frozen["commit"] == commit && frozen["code_crc32"] == crc, kOp,
           "'{}' froze the study on commit {} (CRC-32 {}); this binary is commit {} (CRC-32 {}): run the frozen "
           "binary ({})", path.string(), frozen["commit"].get<std::string>(), frozen["code_crc32"].get<std::string>(),
           commit, crc, frozen.value("code_file", "?"));
}

void run_training(const RegistrationV5& reg, const StudyV5Options& o, const fs::path& out_dir,
                  const std::vector<StudyPointV5>& points) {
  SweepOptions sweep;
  sweep.config_path = (fs::path(reg.path).parent_path().parent_path() / reg.base_config).string();
  sweep.fixed_overrides = reg.run_overrides();
  if (o.quick) sweep.fixed_overrides.insert(sweep.fixed_overrides.end(), reg.quick_overrides.begin(), reg.quick_overrides.end());
  sweep.out_dir = out_dir.string();
  sweep.jobs = o.jobs;
  sweep.threads_per_run = 1;
  sweep.quiet = o.quiet;
  sweep.normlab_binary = o.normlab_binary;
  sweep.command_line = "normlab reproduce xiong-v5 (rerun it to resume)";
  std::vector<SweepPoint> sweep_points;
  for (const StudyPointV5& p : points) {
    SweepPoint sp;
    for (const std::string& text : p.arm->overrides) sp.overrides.push_back(split_override(text, p.arm->id));
    sp.overrides.emplace_back("seed", std::to_string(p.seed));
    sp.name = p.name;
    sweep_points.push_back(std::move(sp));
  }
  run_sweep(sweep, sweep_points);
}

}  // namespace

std::vector<StudyPointV5> study_points(const std::vector<const ArmV5*>& arms, const std::vector<int>& seeds) {
  std::vector<StudyPointV5> out;
  for (int seed : seeds)
    for (const ArmV5* arm : arms) out.push_back({arm, seed, fmt::format("{},seed={}", arm->id, seed)});
  return out;
}

void run_study_v5(const StudyV5Options& o) {
  const RegistrationV5 reg = load_registration_v5(o.registration);
  const fs::path out_dir = !o.out_dir.empty() ? fs::path(o.out_dir) : fs::path(o.quick ? "runs/xiong-v5-quick" : "runs/xiong-v5");
  fs::create_directories(out_dir);
  if (!o.record_only) {
    if (!o.quick) check_frozen_build(out_dir, o.record_dir);
    // --quick runs on pilot seed 1: never a confirmatory seed.
    const std::vector<int> seeds = o.quick ? std::vector<int>{1} : reg.seeds(o.seeds > 0 ? o.seeds : reg.training_seeds());
    run_training(reg, o, out_dir, study_points(chosen_arms(reg, o), seeds));
    if (!o.skip_init_probe && !o.exploratory) {
      const std::vector<int> probe_seeds = o.quick ? std::vector<int>{1} : reg.seeds(reg.init_probe.seeds);
      run_init_probe(reg, o.quick ? reg.quick_overrides : std::vector<std::string>{}, probe_seeds,
                     out_dir / "init_profile.csv");
    }
  }
  if (!o.record_dir.empty()) write_record_v5(reg, out_dir, o.record_dir);
}

}  // namespace normlab::xiong
