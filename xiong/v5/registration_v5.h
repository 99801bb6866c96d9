// The pre-registration of Xiong v5 (xiong/registration_v5.toml): the paper's warmup experiment
// (its Figure 1) on the Bible translation task, fixed and committed before any confirmatory run.
// It names the base config and the overrides every run shares, the arms (each a list of config
// overrides), the confirmatory seeds, the horizon in epochs, how a run is scored (checkpoint, beam,
// length penalty, BLEU signature, the BLEU of a diverged run), the init-time probe, and the claims:
// for each its arms, quantity, statistic, primary test, decision rule, smallest effect of interest
// with its reason, and Holm family. Errors start with "[registration]" and name file, line and key.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace normlab::xiong {

struct ArmV5 {
  std::string id;           // "post-w1-1e-3"
  std::string role;         // "confirmatory" | "exploratory" (run after the confirmatory grid, if the budget allows)
  std::string description;  // the arm in words (placement, schedule)
  std::vector<std::string> overrides;  // config overrides on top of the registration's own
  int line = 0;
};

// What a claim's per-seed number is (one row of kQuantities in registration_v5.cpp).
enum class QuantityV5 { TestBleu, EpochsToThreshold, InitSlope };
// How a claim is decided (one row of kDecisions in registration_v5.cpp).
enum class DecisionV5 { MinimumEffect, NonInferiority, Equivalence };

struct ClaimV5 {
  std::string id, family, statement, paper;
  QuantityV5 quantity = QuantityV5::TestBleu;
  std::string reference_arm, compared_arm;  // paired-by-seed difference: reference - compared
                                            // (InitSlope: compared_arm only, the slope of that arm)
  std::string stack, weight;                // InitSlope: "encoder" | "decoder", "w1" | "w2"
  std::string statistic, primary_test, secondary;
  DecisionV5 decision = DecisionV5::MinimumEffect;
  double sesoi = 0.0;                       // MinimumEffect: the estimate must exceed it; NonInferiority:
                                            // the margin (the estimate must stay above -sesoi)
  double low = 0.0, high = 0.0;             // Equivalence: the interval the 90% interval must lie in
  std::string sesoi_reason;
  int seeds = 0;                            // the first `seeds` confirmatory seeds
  int line = 0;
};

struct InitProbeV5 {
  std::vector<std::string> arms;  // arms whose models are probed at initialization (placement matters)
  int64_t batches = 0;            // training batches per model (the gradient is averaged over them)
  int64_t batch_pairs = 0;        // sentence pairs per batch
  int seeds = 0;                  // the first `seeds` confirmatory seeds
};

struct RegistrationV5 {
  std::string path, protocol, date;
  double alpha = 0.05;
  std::string base_config;                 // relative to the source tree
  std::vector<std::string> overrides;      // applied to every run, before the arm's (see run_overrides)
  int64_t epochs = 0;                      // the horizon
  std::string scored_checkpoint;           // "best" (lowest validation loss)
  int64_t beam = 0;
  double length_penalty = 0.0;
  std::string bleu_signature;
  double diverged_bleu = 0.0;              // the test BLEU a diverged run counts as
  double threshold_val_bleu = 0.0;         // EpochsToThreshold: the validation BLEU to reach
  double budget_cpu_hours = 0.0;
  std::vector<int> used_seeds;             // every seed run before (design and earlier studies)
  std::vector<int> confirmatory_seeds;
  std::vector<std::string> quick_overrides;  // --quick: a small slice, never confirmatory
  std::vector<ArmV5> arms;
  InitProbeV5 init_probe;
  std::vector<ClaimV5> claims;

  // What every run adds to base_config before its arm's overrides: `overrides`, then the horizon
  // and the test decoding (train.epochs, log.test_beam, log.test_length_penalty) from the keys above.
  std::vector<std::string> run_overrides() const;
  const ArmV5& arm(const std::string& id) const;  // throws naming the file when not registered
  std::vector<int> seeds(int count) const;        // the first `count` confirmatory seeds
  // The arms a role's runs use, in file order ("confirmatory" or "exploratory").
  std::vector<const ArmV5*> arms_with_role(const std::string& role) const;
  // The seeds the confirmatory arms run on: the most any training claim uses.
  int training_seeds() const;
};

// Reads and checks the file: every key known and of its type, arm ids unique and referenced arms
// registered, each claim's decision with its margin and reason, seeds within the confirmatory
// list, confirmatory seeds disjoint from used_seeds.
RegistrationV5 load_registration_v5(const std::string& path);

const char* quantity_name(QuantityV5 quantity);
const char* decision_name(DecisionV5 decision);

}  // namespace normlab::xiong
