#include "xiong/registration.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include "core/error.h"
#include "xiong/toml_table_reader.h"

namespace normlab::xiong {

namespace {

constexpr const char* kOp = "registration";

RegisteredClaim read_claim(const toml::table& table, const std::string& path, size_t index) {
  const std::string id = TableReader(table, path, fmt::format("claim[{}].", index)).text("id");
  TableReader r(table, path, fmt::format("claim '{}': ", id));
  RegisteredClaim c;
  c.line = r.table_line();
  c.id = r.text("id");
  c.family = r.text("family");
  c.statement = r.text("statement");
  c.paper = r.text("paper");
  c.task = r.text("task");
  c.arms = r.texts("arms");
  if (table.get("points")) c.points = r.texts("points");
  c.statistic = r.text("statistic");
  c.primary_test = r.text("primary_test");
  c.secondary = r.text("secondary", false);
  c.decision = r.text("decision");
  c.predicted = r.text("predicted", false);
  c.null_value = r.number("null", false);
  c.low = r.number("low", false);
  c.high = r.number("high", false);
  c.margin_reason = r.text("margin_reason");
  c.seeds = static_cast<int>(r.integer("seeds"));
  c.steps = r.integer("steps");
  r.check_no_other_keys();
  return c;
}

void check_claim(const RegisteredClaim& c, const Registration& reg) {
  const std::string at = fmt::format("{} line {}: claim '{}'", reg.path, c.line, c.id);
  NL_CHECK(c.family == "paper" || c.family == "exploratory", kOp,
           "{}: family must be \"paper\" or \"exploratory\", got \"{}\"", at, c.family);
  NL_CHECK(c.task == "init" || c.task == "copy" || c.task == "text", kOp,
           "{}: task must be \"init\", \"copy\" or \"text\", got \"{}\"", at, c.task);
  NL_CHECK(!c.arms.empty(), kOp, "{}: arms is empty", at);
  if (c.task == "init") {
    NL_CHECK(c.points.empty(), kOp, "{}: an init-time claim has no training points", at);
  } else {
    NL_CHECK(c.points.size() == c.arms.size(), kOp, "{}: a training claim needs one point per arm, got {} for {} arms",
             at, c.points.size(), c.arms.size());
    for (const std::string& p : c.points) (void)parse_point(p, at);
  }
  if (c.decision == "direction") {
    NL_CHECK(c.predicted == "above" || c.predicted == "below", kOp,
             "{}: a direction claim needs predicted = \"above\" or \"below\", got \"{}\"", at, c.predicted);
  } else {
    NL_CHECK(c.decision == "equivalence" || c.decision == "range", kOp,
             "{}: decision must be \"direction\", \"equivalence\" or \"range\", got \"{}\"", at, c.decision);
    NL_CHECK(c.low < c.high, kOp, "{}: an {} claim needs low < high, got [{}, {}]", at, c.decision, c.low, c.high);
  }
  NL_CHECK(!c.margin_reason.empty(), kOp, "{}: margin_reason is empty", at);
  NL_CHECK(c.seeds >= 2 && c.seeds <= static_cast<int>(reg.confirmatory_seeds.size()), kOp,
           "{}: seeds must be in [2, {}] (the confirmatory seeds), got {}", at, reg.confirmatory_seeds.size(),
           c.seeds);
  NL_CHECK(c.steps >= 0 && (c.task == "init") == (c.steps == 0), kOp,
           "{}: steps must be 0 for init-time probes and > 0 for training claims, got {} (task {})", at, c.steps,
           c.task);
}

}  // namespace

Registration load_registration(const std::string& path) {
  const toml::table root = parse_registration_file(path);
  Registration reg;
  reg.path = path;
  for (const auto& [key, node] : root) {
    NL_CHECK(key.str() == "registration" || key.str() == "claim", kOp, "{} line {}: unknown table {}", path,
             node.source().begin.line, key.str());
  }
  const toml::table* head = root["registration"].as_table();
  NL_CHECK(head, kOp, "{}: no [registration] table", path);
  TableReader r(*head, path, "registration.");
  reg.protocol = r.text("protocol");
  reg.alpha = r.number("alpha");
  reg.pilot_seeds = r.integers("pilot_seeds");
  reg.confirmatory_seeds = r.integers("confirmatory_seeds");
  (void)r.text("date");
  (void)r.text("multiplicity");
  r.check_no_other_keys();
  NL_CHECK(reg.alpha > 0 && reg.alpha < 1, kOp, "{}: registration.alpha must be in (0, 1), got {}", path, reg.alpha);
  check_disjoint_from_confirmatory(reg, reg.pilot_seeds, "registration.pilot_seeds");
  const toml::array* claims = root["claim"].as_array();
  NL_CHECK(claims && !claims->empty(), kOp, "{}: no [[claim]] tables", path);
  std::set<std::string> ids;
  for (size_t i = 0; i < claims->size(); ++i) {
    const toml::table* t = (*claims)[i].as_table();
    NL_CHECK(t, kOp, "{}: claim[{}] is not a table", path, i);
    RegisteredClaim c = read_claim(*t, path, i);
    check_claim(c, reg);
    NL_CHECK(ids.insert(c.id).second, kOp, "{} line {}: claim '{}' is registered twice", path, c.line, c.id);
    reg.claims.push_back(std::move(c));
  }
  return reg;
}

void check_disjoint_from_confirmatory(const Registration& reg, const std::vector<int>& used, const std::string& what) {
  for (int seed : used) {
    NL_CHECK(std::find(reg.confirmatory_seeds.begin(), reg.confirmatory_seeds.end(), seed) ==
                 reg.confirmatory_seeds.end(),
             kOp, "{}: seed {} of {} is also a confirmatory seed: seeds that chose the design must stay out of "
             "the confirmatory set", reg.path, seed, what);
  }
}

const RegisteredClaim& Registration::require(const std::string& id) const {
  for (const RegisteredClaim& c : claims)
    if (c.id == id) return c;
  fail(kOp, "claim '{}' is not registered in {}: a confirmatory claim must be registered before its runs", id, path);
}

std::vector<const RegisteredClaim*> Registration::family(const std::string& name) const {
  std::vector<const RegisteredClaim*> out;
  for (const RegisteredClaim& c : claims)
    if (c.family == name) out.push_back(&c);
  return out;
}

TrainPoint parse_point(const std::string& text, const std::string& where) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t slash; (slash = text.find('/', start)) != std::string::npos; start = slash + 1)
    parts.push_back(text.substr(start, slash - start));
  parts.push_back(text.substr(start));
  auto number_after = [&](const std::string& part, char prefix) -> int64_t {
    NL_CHECK(part.size() > 1 && part[0] == prefix &&
                 part.find_first_not_of("0123456789", 1) == std::string::npos,
             kOp, "{}: point \"{}\": expected {}<integer>, got \"{}\"", where, text, prefix, part);
    return std::stoll(part.substr(1));
  };
  NL_CHECK(parts.size() == 4 || parts.size() == 5, kOp,
           "{}: point \"{}\" must be placement/optimizer/lr/w<warmup>[/t<steps>]", where, text);
  TrainPoint p;
  p.placement = parts[0];
  p.optimizer = parts[1];
  p.lr = parts[2];
  NL_CHECK(p.lr_value() > 0, kOp, "{}: point \"{}\": lr must be a positive number, got \"{}\"", where, text, p.lr);
  p.warmup = number_after(parts[3], 'w');
  NL_CHECK(p.warmup >= 1, kOp, "{}: point \"{}\": warmup must be >= 1 (1 = none)", where, text);
  if (parts.size() == 5) p.steps = number_after(parts[4], 't');
  return p;
}

std::vector<TrainPoint> Registration::runs_of(const RegisteredClaim& claim) const {
  std::vector<TrainPoint> out;
  for (const std::string& text : claim.points) {
    const TrainPoint arm = parse_point(text, path + ": claim '" + claim.id + "'");
    for (int seed : seeds_of(claim)) {
      TrainPoint p = arm;
      p.seed = seed;
      out.push_back(p);
    }
  }
  return out;
}

std::vector<int> Registration::seeds_of(const RegisteredClaim& claim) const {
  return {confirmatory_seeds.begin(), confirmatory_seeds.begin() + claim.seeds};
}

}  // namespace normlab::xiong
