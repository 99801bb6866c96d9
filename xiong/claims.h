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

// A claim token matches a verdict id equal to it or continuing it after '@', '.' or '\''.
bool claim_matches(const std::string& token, const std::string& verdict_id);

// `--only`, parsed once (run_xiong_suite) and handed to everything that selects runs or verdicts.
class ClaimSelection {
 public:
  ClaimSelection() = default;  // no --only: everything
  // Throws "[reproduce] unknown experiment or claim ..." for a token whose "E<digits>" head is not
  // one of `experiments`.
  ClaimSelection(const std::set<std::string>& tokens, const std::vector<std::string>& experiments);

  bool everything() const { return tokens_.empty(); }
  bool names_claims() const;  // some token is a claim, not a bare experiment
  // Whether the experiment ("E3") runs: everything, or a token names it or one of its claims.
  bool runs_experiment(const std::string& experiment) const;
  // Whether the verdict is selected: everything, or a bare token names its experiment, or a claim
  // token matches it.
  bool selects(const std::string& verdict_id) const;
  // The claim tokens of one experiment ("E3" -> {"E3a", "E3d@1e-3"}).
  std::vector<std::string> claims_of(const std::string& experiment) const;
  // The tokens that select none of `verdict_ids` (a confirmatory --only names registered claims).
  std::vector<std::string> unmatched(const std::vector<std::string>& verdict_ids) const;
  std::string text() const;  // the tokens, comma-separated: "E3a,E4"

 private:
  struct Token {
    std::string text, experiment;  // "E3a@1e-3", "E3"
    bool claim = false;
  };
  bool token_selects(const Token& t, const std::string& verdict_id) const;
  std::vector<Token> tokens_;
};

// `points` of task `copy` (true) or text kept when a claim of the selection for E3 reads them;
// unchanged when it has no E3 claim.
std::vector<TrainPoint> e3_points_for_claims(const Grids& g, const ClaimSelection& selection,
                                             const std::vector<TrainPoint>& points, bool copy);

// The verdicts of `old_json` (an earlier verdicts.json, may be null) with every entry whose id is
// in `fresh` replaced by it and the others of `fresh` appended: the merged list, in order.
std::vector<Verdict> merge_verdicts(const nlohmann::json& old_json, const std::vector<Verdict>& fresh);

}  // namespace normlab::xiong
