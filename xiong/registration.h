// The pre-registration of the Xiong suite's confirmatory claims (xiong/registration.toml): for each
// claim its arms, statistic, primary test, decision rule, margin with its reason, seeds, horizon and
// multiplicity family, fixed and committed before the confirmatory runs. The family "paper" (the
// paper's own claims) is the Holm family; "exploratory" claims are reported apart, unadjusted.
// Confirmatory seeds must be disjoint from every seed used to choose the design (pilot_seeds).
// Errors start with "[registration]" and name the file, the line and the key.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "xiong/grids.h"

namespace normlab::xiong {

struct RegisteredClaim {
  std::string id;         // "E3a@1e-3", as in verdicts.json
  std::string family;     // "paper" | "exploratory"
  std::string statement;  // the claim, short
  std::string paper;      // where the paper says it
  std::string task;       // "init" | "copy" | "text"
  std::vector<std::string> arms;  // the compared arms, in words
  // Training claims: each arm as "placement/optimizer/lr/w<warmup>[/t<steps>]" ("post/adam/5e-4/w1",
  // "post/sgd/3e-2/w200/t3000"), in the order of `arms`; run on every seed of the claim.
  std::vector<std::string> points;
  std::string statistic;  // what the estimate is, with its sign convention
  std::string primary_test;  // the test whose p-value enters Holm (family "paper")
  std::string secondary;     // the estimates and tests reported beside it
  std::string decision;      // "direction" | "equivalence" | "range"
  std::string predicted;     // direction: "above" | "below" the null
  double null_value = 0.0;   // direction: the value of "no effect"
  double low = 0.0, high = 0.0;  // equivalence/range: the interval the estimate's interval must lie in
  std::string margin_reason;     // why that margin (or why none)
  int seeds = 0;                 // the first `seeds` of the registration's confirmatory seeds
  int64_t steps = 0;             // the horizon (0 for init-time probes)
  int line = 0;                  // where the claim starts in the file
};

struct Registration {
  std::string path;
  std::string protocol;             // "v4"
  double alpha = 0.05;              // family-wise error rate of the family "paper"
  std::vector<int> pilot_seeds;     // every seed that chose the design (v1-v3 runs and the v4 pilot)
  std::vector<int> confirmatory_seeds;
  std::vector<RegisteredClaim> claims;

  // The claim with this id; throws "[registration] claim 'X' is not registered in FILE" otherwise,
  // so that the suite cannot report a confirmatory claim that was not fixed in advance.
  const RegisteredClaim& require(const std::string& id) const;
  std::vector<const RegisteredClaim*> family(const std::string& name) const;
  // The seeds a claim's runs use: the first claim.seeds confirmatory seeds.
  std::vector<int> seeds_of(const RegisteredClaim& claim) const;
  // The claim's training runs: each of its points on each of its seeds (arm-major).
  std::vector<TrainPoint> runs_of(const RegisteredClaim& claim) const;
};

// Reads and checks the file: every key known and of its type, every claim complete (a margin and
// its reason for equivalence and range claims, a predicted side for direction claims, one point per
// arm for training claims, none for init-time ones), ids unique, seeds within the confirmatory list,
// confirmatory and pilot seeds disjoint.
Registration load_registration(const std::string& path);

// Throws naming the first seed of `used` that is also confirmatory (`what` says where `used` came
// from: "the v3 copy sweep"): design seeds must stay out of the confirmatory set.
// "post/adam/5e-4/w1[/t3000]" as a TrainPoint (seed 1); throws "[registration] ..." naming `where`.
TrainPoint parse_point(const std::string& text, const std::string& where);

void check_disjoint_from_confirmatory(const Registration& reg, const std::vector<int>& used, const std::string& what);

}  // namespace normlab::xiong
