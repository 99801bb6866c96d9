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

bool claim_matches(const std::string& token, const std::string& verdict_id) {
  if (verdict_id.rfind(token, 0) != 0) return false;
  if (verdict_id.size() == token.size()) return true;
  const char next = verdict_id[token.size()];
  return next == '@' || next == '.' || next == '\'';
}

ClaimSelection::ClaimSelection(const std::set<std::string>& tokens, const std::vector<std::string>& experiments) {
  for (const std::string& text : tokens) {
    const std::string head = head_of(text);
    NL_CHECK(!head.empty() && std::find(experiments.begin(), experiments.end(), head) != experiments.end(),
             "reproduce", "unknown experiment or claim '{}' in --only: an experiment ({}) or one of its claims (E3a, "
             "E3d@1e-3, ...)", text, fmt::join(experiments, ", "));
    tokens_.push_back({text, head, text != head});
  }
}

bool ClaimSelection::names_claims() const {
  return std::any_of(tokens_.begin(), tokens_.end(), [](const Token& t) { return t.claim; });
}

bool ClaimSelection::runs_experiment(const std::string& experiment) const {
  return everything() ||
         std::any_of(tokens_.begin(), tokens_.end(), [&](const Token& t) { return t.experiment == experiment; });
}

bool ClaimSelection::token_selects(const Token& t, const std::string& verdict_id) const {
  return t.claim ? claim_matches(t.text, verdict_id) : t.experiment == head_of(verdict_id);
}

bool ClaimSelection::selects(const std::string& verdict_id) const {
  return everything() ||
         std::any_of(tokens_.begin(), tokens_.end(), [&](const Token& t) { return token_selects(t, verdict_id); });
}

std::vector<std::string> ClaimSelection::claims_of(const std::string& experiment) const {
  std::vector<std::string> out;
  for (const Token& t : tokens_)
    if (t.claim && t.experiment == experiment) out.push_back(t.text);
  return out;
}

std::vector<std::string> ClaimSelection::unmatched(const std::vector<std::string>& verdict_ids) const {
  std::vector<std::string> out;
  for (const Token& t : tokens_)
    if (std::none_of(verdict_ids.begin(), verdict_ids.end(), [&](const std::string& id) { return token_selects(t, id); }))
      out.push_back(t.text);
  return out;
}

std::string ClaimSelection::text() const {
  std::vector<std::string> texts;
  for (const Token& t : tokens_) texts.push_back(t.text);
  return fmt::format("{}", fmt::join(texts, ","));
}

std::vector<TrainPoint> e3_points_for_claims(const Grids& g, const ClaimSelection& selection,
                                             const std::vector<TrainPoint>& points, bool copy) {
  const std::vector<std::string> tokens = selection.claims_of("E3");
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
