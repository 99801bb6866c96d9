// Which build ran a run, on which CPU and when. Each sitting (the start of a run, and each resume
// that trains) adds one entry to RUN/provenance.json, rewritten atomically; summary.json repeats
// them with the run's start and end times and says whether one build on one CPU made the run:
//   {"started_utc": "2026-12-06T00:01:02Z", "first_step": 0, "commit": "7b41621...",
//    "code_file": "/.../normlab", "code_crc32": "89abcdef", "cpu": "Intel(R) Xeon(R) ...", "threads": 2}
// The commit is the one CMake configured the build with (core/build_info.h); the CRC-32 of the
// executable or library holding the code is the exact identity of the binary.
#pragma once
#include <cstdint>
#include <filesystem>

#include <nlohmann/json.hpp>

namespace normlab {

// This sitting: now, the first step it trains, this build, this CPU, OpenMP's thread count.
nlohmann::json current_sitting(int64_t first_step);

// The sittings recorded in run_dir (an empty array when it has none). Throws "[provenance] ..."
// naming the file when it is not an array of sitting objects.
nlohmann::json read_sittings(const std::filesystem::path& run_dir);

// Appends `sitting` to run_dir's provenance.json (atomically: a kill leaves the old list or the new).
void record_sitting(const std::filesystem::path& run_dir, const nlohmann::json& sitting);

// What summary.json says about provenance: started_utc (the first sitting's), finished_utc (now),
// sittings, and one_build_one_cpu (every sitting has the same code_crc32, cpu and threads).
nlohmann::json provenance_summary(const std::filesystem::path& run_dir);

}  // namespace normlab
