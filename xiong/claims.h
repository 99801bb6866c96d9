// `normlab reproduce xiong --only TOKEN,...`: a token is an experiment ("E3": every run and verdict
// of it) or a claim ("E3a", "E3a@1e-3", "E3d.text"): the runs that claim's verdicts read, and only
// its rows rewritten in an existing report.md and verdicts.json. A claim token matches a verdict
// id equal to it or continuing it with '@', '.' or '\'' after a complete part ("E3a" matches
// "E3a@5e-4" and "E3a.text@5e-4", not "E3ab"). Claims of E3 train exactly their arms; a claim of
// another experiment trains that experiment's runs (completed runs are reused either way).
#pragma once
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xiong/grids.h"
#include "xiong/verdict.h"

namespace normlab::xiong {

// "E3a@1e-3" -> "E3"; throws "[reproduce] ..." for a token that names no experiment of `known`.
std::string experiment_of(const std::string& token, const std::vector<std::string>& known);
bool is_claim_token(const std::string& token);  // not a bare experiment id
bool claim_matches(const std::string& token, const std::string& verdict_id);
// Whether `only` keeps this verdict: a claim token matches it, or a bare token names its experiment
// (true when `only` names no claim at all).
bool claim_selected(const std::set<std::string>& only, const std::string& verdict_id);

// `points` of task `copy` (true) or text kept when a claim of `only` for E3 reads them; unchanged
// when `only` has no E3 claim token.
std::vector<TrainPoint> e3_points_for_claims(const Grids& g, const std::set<std::string>& only,
                                             const std::vector<TrainPoint>& points, bool copy);

// The verdicts of `old_json` (an earlier verdicts.json, may be null) with every entry whose id is
// in `fresh` replaced by it and the others of `fresh` appended: the merged list, in order.
std::vector<Verdict> merge_verdicts(const nlohmann::json& old_json, const std::vector<Verdict>& fresh);

}  // namespace normlab::xiong
