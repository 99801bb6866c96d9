#include "xiong/v5/registration_v5.h"

#include <algorithm>
#include <array>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/error.h"
#include "xiong/toml_table_reader.h"

namespace normlab::xiong {

namespace {

constexpr const char* kOp = kRegistrationOp;

struct QuantityRow {
  QuantityV5 quantity;
  const char* name;
  bool paired;  // a difference between two arms (else one arm's own number)
};
constexpr std::array<QuantityRow, 3> kQuantities{{
    {QuantityV5::TestBleu, "test_bleu", true},
    {QuantityV5::EpochsToThreshold, "epochs_to_threshold", true},
    {QuantityV5::InitSlope, "init_slope", false},
}};

struct DecisionRow {
  DecisionV5 decision;
  const char* name;
  bool needs_sesoi;     // a positive sesoi (a smallest effect or a margin)
  bool needs_interval;  // low < high
};
constexpr std::array<DecisionRow, 3> kDecisions{{
    {DecisionV5::MinimumEffect, "minimum_effect", true, false},
    {DecisionV5::NonInferiority, "non_inferiority", true, false},
    {DecisionV5::Equivalence, "equivalence", false, true},
}};

const QuantityRow& quantity_row(QuantityV5 q) {
  return *std::find_if(kQuantities.begin(), kQuantities.end(), [&](const QuantityRow& r) { return r.quantity == q; });
}
const DecisionRow& decision_row(DecisionV5 d) {
  return *std::find_if(kDecisions.begin(), kDecisions.end(), [&](const DecisionRow& r) { return r.decision == d; });
}

QuantityV5 parse_quantity(const std::string& text, const std::string& where) {
  for (const QuantityRow& r : kQuantities)
    if (text == r.name) return r.quantity;
  fail(kOp, "{}: quantity '{}' is none of test_bleu, epochs_to_threshold, init_slope", where, text);
}
DecisionV5 parse_decision(const std::string& text, const std::string& where) {
  for (const DecisionRow& r : kDecisions)
    if (text == r.name) return r.decision;
  fail(kOp, "{}: decision '{}' is none of minimum_effect, non_inferiority, equivalence", where, text);
}

const toml::table& table_at(const toml::table& root, const char* key, const std::string& path) {
  const auto* t = root.get_as<toml::table>(key);
  NL_CHECK(t, kOp, "{}: the table [{}] is missing", path, key);
  return *t;
}

std::vector<const toml::table*> tables_of(const toml::table& root, const char* key, const std::string& path) {
  const auto* a = root.get_as<toml::array>(key);
  NL_CHECK(a && !a->empty(), kOp, "{}: no [[{}]] entries", path, key);
  std::vector<const toml::table*> out;
  for (const toml::node& n : *a) {
    NL_CHECK(n.as_table(), kOp, "{} line {}: [[{}]] entries must be tables", path, n.source().begin.line, key);
    out.push_back(n.as_table());
  }
  return out;
}

void read_header(const toml::table& t, const std::string& path, RegistrationV5& reg) {
  TableReader r(t, path, "registration.");
  reg.protocol = r.text("protocol");
  reg.date = r.text("date");
  reg.alpha = r.number("alpha");
  reg.base_config = r.text("base_config");
  reg.overrides = r.texts("overrides");
  reg.epochs = r.integer("epochs");
  reg.scored_checkpoint = r.text("scored_checkpoint");
  reg.beam = r.integer("beam");
  reg.length_penalty = r.number("length_penalty");
  reg.bleu_signature = r.text("bleu_signature");
  reg.diverged_bleu = r.number("diverged_bleu");
  reg.threshold_val_bleu = r.number("threshold_val_bleu");
  reg.budget_cpu_hours = r.number("budget_cpu_hours");
  reg.used_seeds = r.integers("used_seeds");
  reg.confirmatory_seeds = r.integers("confirmatory_seeds");
  r.check_no_other_keys();
  NL_CHECK(reg.protocol == "v5", kOp, "{}: registration.protocol must be \"v5\", got \"{}\"", path, reg.protocol);
  NL_CHECK(reg.epochs > 0 && reg.beam > 0 && reg.alpha > 0 && reg.alpha < 1, kOp,
           "{}: registration.epochs and beam must be positive and alpha in (0, 1)", path);
  NL_CHECK(reg.scored_checkpoint == "best" || reg.scored_checkpoint == "last", kOp,
           "{}: registration.scored_checkpoint must be \"best\" or \"last\"", path);
}

ArmV5 read_arm(const toml::table& t, const std::string& path, size_t index) {
  TableReader r(t, path, fmt::format("arm[{}].", index));
  ArmV5 arm;
  arm.line = r.table_line();
  arm.id = r.text("id");
  arm.role = r.text("role");
  arm.description = r.text("description");
  arm.overrides = r.texts("overrides");
  r.check_no_other_keys();
  NL_CHECK(arm.role == "confirmatory" || arm.role == "exploratory", kOp,
           "{} line {}: arm '{}': role must be \"confirmatory\" or \"exploratory\"", path, arm.line, arm.id);
  return arm;
}

ClaimV5 read_claim(const toml::table& t, const std::string& path, size_t index) {
  const std::string id = TableReader(t, path, fmt::format("claim[{}].", index)).text("id");
  TableReader r(t, path, fmt::format("claim '{}': ", id));
  const std::string where = fmt::format("{} line {}: claim '{}'", path, r.table_line(), id);
  ClaimV5 c;
  c.line = r.table_line();
  c.id = id;
  r.text("id");
  c.family = r.text("family");
  c.statement = r.text("statement");
  c.paper = r.text("paper");
  c.quantity = parse_quantity(r.text("quantity"), where);
  c.reference_arm = r.text("reference_arm", quantity_row(c.quantity).paired);
  c.compared_arm = r.text("compared_arm");
  c.stack = r.text("stack", c.quantity == QuantityV5::InitSlope);
  c.weight = r.text("weight", c.quantity == QuantityV5::InitSlope);
  c.statistic = r.text("statistic");
  c.primary_test = r.text("primary_test");
  c.secondary = r.text("secondary");
  c.decision = parse_decision(r.text("decision"), where);
  c.sesoi = r.number("sesoi", decision_row(c.decision).needs_sesoi);
  c.low = r.number("low", decision_row(c.decision).needs_interval);
  c.high = r.number("high", decision_row(c.decision).needs_interval);
  c.sesoi_reason = r.text("sesoi_reason");
  c.seeds = static_cast<int>(r.integer("seeds"));
  r.check_no_other_keys();
  NL_CHECK(!decision_row(c.decision).needs_sesoi || c.sesoi > 0, kOp, "{}: sesoi must be positive", where);
  NL_CHECK(!decision_row(c.decision).needs_interval || c.low < c.high, kOp, "{}: low must be below high", where);
  NL_CHECK(c.quantity != QuantityV5::InitSlope || ((c.stack == "encoder" || c.stack == "decoder") &&
                                                   (c.weight == "w1" || c.weight == "w2")),
           kOp, "{}: stack must be encoder or decoder and weight w1 or w2", where);
  NL_CHECK(!c.sesoi_reason.empty(), kOp, "{}: sesoi_reason is empty", where);
  return c;
}

InitProbeV5 read_init_probe(const toml::table& t, const std::string& path) {
  TableReader r(t, path, "init_probe.");
  InitProbeV5 p;
  p.arms = r.texts("arms");
  p.batches = r.integer("batches");
  p.batch_pairs = r.integer("batch_pairs");
  p.seeds = static_cast<int>(r.integer("seeds"));
  r.check_no_other_keys();
  NL_CHECK(p.batches > 0 && p.batch_pairs > 0 && p.seeds > 0, kOp,
           "{}: init_probe.batches, batch_pairs and seeds must be positive", path);
  return p;
}

void check_references(const RegistrationV5& reg) {
  std::set<std::string> ids;
  for (const ArmV5& arm : reg.arms)
    NL_CHECK(ids.insert(arm.id).second, kOp, "{} line {}: arm '{}' is registered twice", reg.path, arm.line, arm.id);
  std::set<std::string> claim_ids;
  const auto n_seeds = static_cast<int>(reg.confirmatory_seeds.size());
  for (const ClaimV5& c : reg.claims) {
    NL_CHECK(claim_ids.insert(c.id).second, kOp, "{} line {}: claim '{}' is registered twice", reg.path, c.line, c.id);
    for (const std::string* arm : {&c.reference_arm, &c.compared_arm})
      if (!arm->empty()) reg.arm(*arm);
    NL_CHECK(c.seeds > 0 && c.seeds <= n_seeds, kOp, "{} line {}: claim '{}' uses {} seeds; {} are confirmatory",
             reg.path, c.line, c.id, c.seeds, n_seeds);
    NL_CHECK(c.family != "paper" || c.quantity == QuantityV5::InitSlope || reg.arm(c.compared_arm).role == "confirmatory",
             kOp, "{} line {}: claim '{}' of family paper compares an exploratory arm", reg.path, c.line, c.id);
  }
  for (const std::string& arm : reg.init_probe.arms) reg.arm(arm);
  NL_CHECK(reg.init_probe.seeds <= n_seeds, kOp, "{}: init_probe.seeds exceeds the confirmatory seeds", reg.path);
  for (int seed : reg.confirmatory_seeds)
    NL_CHECK(std::find(reg.used_seeds.begin(), reg.used_seeds.end(), seed) == reg.used_seeds.end(), kOp,
             "{}: confirmatory seed {} was used before (used_seeds): it may have chosen the design", reg.path, seed);
}

}  // namespace

const char* quantity_name(QuantityV5 quantity) { return quantity_row(quantity).name; }
const char* decision_name(DecisionV5 decision) { return decision_row(decision).name; }

std::vector<std::string> RegistrationV5::run_overrides() const {
  std::vector<std::string> out = overrides;
  out.push_back(fmt::format("train.epochs={}", epochs));
  out.push_back(fmt::format("log.test_beam={}", beam));
  out.push_back(fmt::format("log.test_length_penalty={}", length_penalty));
  return out;
}

const ArmV5& RegistrationV5::arm(const std::string& id) const {
  for (const ArmV5& a : arms)
    if (a.id == id) return a;
  fail(kOp, "arm '{}' is not registered in {}", id, path);
}

std::vector<int> RegistrationV5::seeds(int count) const {
  NL_CHECK(count >= 0 && count <= static_cast<int>(confirmatory_seeds.size()), kOp,
           "{}: {} seeds asked, {} confirmatory", path, count, confirmatory_seeds.size());
  return {confirmatory_seeds.begin(), confirmatory_seeds.begin() + count};
}

std::vector<const ArmV5*> RegistrationV5::arms_with_role(const std::string& role) const {
  std::vector<const ArmV5*> out;
  for (const ArmV5& a : arms)
    if (a.role == role) out.push_back(&a);
  return out;
}

int RegistrationV5::training_seeds() const {
  int most = 0;
  for (const ClaimV5& c : claims)
    if (c.quantity != QuantityV5::InitSlope) most = std::max(most, c.seeds);
  return most;
}

RegistrationV5 load_registration_v5(const std::string& path) {
  const toml::table root = parse_registration_file(path);
  RegistrationV5 reg;
  reg.path = path;
  read_header(table_at(root, "registration", path), path, reg);
  {
    TableReader quick(table_at(root, "quick", path), path, "quick.");
    reg.quick_overrides = quick.texts("overrides");
    quick.check_no_other_keys();
  }
  const std::vector<const toml::table*> arm_tables = tables_of(root, "arm", path);
  for (size_t i = 0; i < arm_tables.size(); ++i) reg.arms.push_back(read_arm(*arm_tables[i], path, i));
  reg.init_probe = read_init_probe(table_at(root, "init_probe", path), path);
  const std::vector<const toml::table*> claim_tables = tables_of(root, "claim", path);
  for (size_t i = 0; i < claim_tables.size(); ++i) reg.claims.push_back(read_claim(*claim_tables[i], path, i));
  for (const auto& [key, node] : root)
    NL_CHECK(key == "registration" || key == "quick" || key == "arm" || key == "init_probe" || key == "claim", kOp,
             "{} line {}: unknown table [{}]", path, node.source().begin.line, key.str());
  check_references(reg);
  return reg;
}

}  // namespace normlab::xiong
