// Xiong v5's report (docs/xiong/v5/report.md): the record's rows (confirmatory and refused, with
// why), each claim's verdict with its estimate against the smallest effect of interest and the other
// statistics beside it, the audit (best checkpoint against last weights, runs still improving at the
// horizon), each arm's test BLEU and compute, and Figure 1's numbers. Every sentence is derived
// from the record and the registration.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "xiong/v5/analysis_v5.h"

namespace normlab::xiong {

struct ReportInputsV5 {
  const RegistrationV5* reg = nullptr;
  const RecordV5* record = nullptr;  // classified (classify_runs)
  const std::vector<ClaimResultV5>* results = nullptr;
  std::string registration_file, registration_commit, registered_utc;
};

std::string report_v5(const ReportInputsV5& inputs);

// Loads the registration and the record, refuses the rows that do not count (the registration's
// commit time from git), decides the claims and returns the report.
std::string analyse_record_v5(const std::string& registration_path, const std::filesystem::path& record_dir);

}  // namespace normlab::xiong
