#include "xiong/claims.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "xiong/e3_common.h"

namespace normlab::xiong {

namespace {

// The "E<digits>" head of a token ("" if it has none).
std::string head_of(const std::string& token) {
  if (token.size() < 2 || token[0] != 'E' || !std::isdigit(static_cast<unsigned char>(token[1]))) return "";
  size_t i = 1;
  while (i < token.size() && std::isdigit(static_cast<unsigned char>(token[i]))) ++i;
  return token.substr(0, i);
}

}  // namespace

std::string experiment_of(const std::string& token, const std::vector<std::string>& known) {
  const std::string head = head_of(token);
  NL_CHECK(!head.empty() && std::find(known.begin(), known.end(), head) != known.end(), "reproduce",
           "unknown experiment or claim '{}' in --only: an experiment ({}) or one of its claims (E3a, E3d@1e-3, ...)",
           token, fmt::join(known, ", "));
  return head;
}

bool is_claim_token(const std::string& token) { return token != head_of(token); }

bool claim_matches(const std::string& token, const std::string& verdict_id) {
  if (verdict_id.rfind(token, 0) != 0) return false;
  if (verdict_id.size() == token.size()) return true;
  const char next = verdict_id[token.size()];
  return next == '@' || next == '.' || next == '\'';
}

bool claim_selected(const std::set<std::string>& only, const std::string& verdict_id) {
  bool any_claim = false;
  for (const std::string& t : only) {
    if (!is_claim_token(t)) {
      if (t == head_of(verdict_id)) return true;  // a bare experiment keeps all its verdicts
      continue;
    }
    any_claim = true;
    if (claim_matches(t, verdict_id)) return true;
  }
  return !any_claim;
}

std::vector<TrainPoint> e3_points_for_claims(const Grids& g, const std::set<std::string>& only,
                                             const std::vector<TrainPoint>& points, bool copy) {
  std::vector<std::string> tokens;
  for (const std::string& t : only)
    if (is_claim_token(t) && head_of(t) == "E3") tokens.push_back(t);
  if (tokens.empty()) return points;
  std::set<std::string> needed;  // arm names with seed 1
  for (const ClaimArms& c : e3_claims(g)) {
    if ((c.task == Task::Copy) != copy) continue;
    for (const std::string& t : tokens)
      if (claim_matches(t, c.id))
        for (const TrainPoint& a : c.arms) needed.insert(a.name());
  }
  std::vector<TrainPoint> out;
  for (const TrainPoint& p : points) {
    TrainPoint arm = p;
    arm.seed = 1;
    if (needed.count(arm.name())) out.push_back(p);
  }
  return out;
}

std::vector<Verdict> merge_verdicts(const nlohmann::json& old_json, const std::vector<Verdict>& fresh) {
  std::vector<Verdict> out;
  std::vector<bool> used(fresh.size(), false);
  if (old_json.is_array())
    for (const nlohmann::json& j : old_json) {
      Verdict v = Verdict::from_json(j);
      for (size_t i = 0; i < fresh.size(); ++i)
        if (fresh[i].id == v.id) {
          v = fresh[i];
          used[i] = true;
        }
      out.push_back(v);
    }
  for (size_t i = 0; i < fresh.size(); ++i)
    if (!used[i]) out.push_back(fresh[i]);
  return out;
}

}  // namespace normlab::xiong
