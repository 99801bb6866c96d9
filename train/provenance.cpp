#include "train/provenance.h"

#include <omp.h>

#include "core/build_info.h"
#include "core/digest.h"
#include "core/error.h"
#include "core/files.h"
#include "io/atomic_file.h"
#include "train/run_dir.h"

namespace normlab {

namespace fs = std::filesystem;

namespace {
// The keys every sitting has, with their JSON kinds.
bool is_sitting(const nlohmann::json& s) {
  if (!s.is_object()) return false;
  for (const char* key : {"started_utc", "commit", "code_file", "code_crc32", "cpu"})
    if (!s.contains(key) || !s[key].is_string()) return false;
  return s.contains("first_step") && s["first_step"].is_number_integer() && s.contains("threads") &&
         s["threads"].is_number_integer();
}
}  // namespace

nlohmann::json current_sitting(int64_t first_step) {
  const std::string code = code_file();
  std::string crc = "unknown";
  if (!code.empty() && fs::is_regular_file(code)) crc = crc32_hex(digest_of(read_whole_file(code, "provenance")).crc32);
  return {{"started_utc", utc_now()}, {"first_step", first_step}, {"commit", build_commit()}, {"code_file", code},
          {"code_crc32", crc}, {"cpu", cpu_model_name()}, {"threads", omp_get_max_threads()}};
}

nlohmann::json read_sittings(const fs::path& run_dir) {
  const fs::path path = run_dir / run_files::kProvenance;
  if (!fs::exists(path)) return nlohmann::json::array();
  const nlohmann::json sittings = nlohmann::json::parse(read_whole_file(path, "provenance"), nullptr, false);
  NL_CHECK(sittings.is_array(), "provenance", "'{}' is not a JSON array of sittings", path.string());
  for (size_t i = 0; i < sittings.size(); ++i)
    NL_CHECK(is_sitting(sittings[i]), "provenance", "'{}': entry {} is not a sitting (started_utc, first_step, commit, "
             "code_file, code_crc32, cpu, threads)", path.string(), i);
  return sittings;
}

void record_sitting(const fs::path& run_dir, const nlohmann::json& sitting) {
  nlohmann::json sittings = read_sittings(run_dir);
  sittings.push_back(sitting);
  write_file_atomic((run_dir / run_files::kProvenance).string(), sittings.dump(1) + "\n");
}

nlohmann::json provenance_summary(const fs::path& run_dir) {
  const nlohmann::json sittings = read_sittings(run_dir);
  bool same = true;
  for (const nlohmann::json& s : sittings)
    for (const char* key : {"code_crc32", "cpu", "threads"}) same = same && s[key] == sittings.front()[key];
  return {{"started_utc", sittings.empty() ? nlohmann::json() : sittings.front()["started_utc"]},
          {"finished_utc", utc_now()},
          {"sittings", sittings},
          {"one_build_one_cpu", same}};
}

}  // namespace normlab
