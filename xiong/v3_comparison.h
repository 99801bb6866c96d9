// From v3 to v4: each registered v4 claim beside the v3 verdicts it replaces (docs/xiong/data/
// verdicts.json, the v3 suite's), so that a reader sees which verdicts the confirmatory protocol
// kept, changed or could not yet decide.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xiong/registered_analysis.h"

namespace normlab::xiong {

// The v3 rows a v4 claim replaces: the row of the same id, and the rows "<id>.<suffix>" (v3's
// E3d@1e-3.to0.5 and .to0.1 for v4's E3d@1e-3). Empty for a claim new in v4.
std::vector<nlohmann::json> v3_rows_of(const std::string& v4_id, const nlohmann::json& v3_verdicts);

// A markdown table: v4 claim, its verdict and estimate, each matched v3 row's id, verdict and
// estimate, and "kept" | "changed" | "new in v4" | "not yet decided", followed by "; the estimate
// moved more than 2x (Nx larger|smaller)" or "; the estimate changed sign" against the v3 row of
// the same id.
std::string v3_to_v4_table(const std::vector<ClaimAnalysis>& v4, const nlohmann::json& v3_verdicts);

}  // namespace normlab::xiong
