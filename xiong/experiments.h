// The experiments of `normlab reproduce xiong` (docs/xiong/README.md):
//   E1 Theorem 1 and Lemma 2 at init                 e1_theorem1.cpp
//   E2 per-layer gradient profile at init             e2_profile.cpp
//   E3 warmup study (copy task, text; Adam, SGD, RAdam)  e3_warmup.cpp
//   E4 learning-rate sensitivity                      e4_lr_sensitivity.cpp
//   E5 Admin amplification, DeepNorm, sandwich        e5_beyond.cpp
//   E6 RMSNorm, Dynamic Tanh vs LayerNorm             e6_rmsnorm_dynamic_tanh.cpp
//   E7 gradient profile over training, Adam's update size   e7_mechanism.cpp
//   E8 Post-LN vs Pre-LN in bf16 and fp16                e8_precision.cpp
//   E9 why Post-LN needs warmup: dynamics, interventions  e9_why_warmup.cpp (exploratory, own sweep)
//   E10 the paper's architectures (exploratory): E2 in an encoder-decoder   e10_architectures.cpp;
//       the warmup grid on translation   e10_translation.cpp; the BERT claim in an encoder   e10_bert.cpp
// Init-time probes run in this process and are cached (report.h: cached); training runs go through
// one sweep per base config (training.h), whose points each experiment lists here.
#pragma once
#include <vector>

#include <nlohmann/json.hpp>

#include "xiong/report.h"
#include "xiong/theorem1.h"
#include "xiong/training.h"

namespace normlab::xiong {

// The base model of the init probes: ctx's copy of grids.probe_config plus grids.probe_overrides
// plus `extra` overrides.
ModelConfig probe_model(const Context& ctx, const std::vector<std::string>& extra = {});

// ---- E1 ----
// Theorem 1 / Lemma 2 measurements for one norm type (cached; the JSON's layout is in
// xiong/theorem1.h): for "post" and "pre", per seed the last layer's ||dL/dW2|| at each depth, the
// final LayerNorm's two factors (input norm, gradient at its output) at each depth, the residual
// ||x_l||^2/d and Lemma 2's ||x_{l,5}||^2/d at the largest depth; "theory" repeats them with
// d_ff = d and unit-variance input.
nlohmann::json theorem1_probe(const Context& ctx, const std::string& norm_type);
// The fitted exponent of ||dL/dW2|| in L (log-log slope of the seed-mean norms over the depths
// >= fit_from; 0 = every depth) with a bootstrap interval over seeds. Pass grids.e1_fit_from for
// the suite's fit range.
Interval theorem1_exponent(const nlohmann::json& probe, const std::string& placement,
                           const std::vector<int64_t>& depths, bool theory = false, int64_t fit_from = 0);
Section run_e1(const Context& ctx);

// ---- E2 ----
Section run_e2(const Context& ctx);
// ---- E10 (exploratory): E2 in an encoder-decoder (E10a), the warmup grid on synthetic translation
// (E10b, sweep "e10_translate" of grids.e10_translate_config), section 4's BERT claim in a masked-LM
// encoder (E10c, sweep "e10_mlm" of grids.e10_mlm_config) ----
// An arm of E10b/c: Adam at lr_max `lr`, warmup grids.e10_warmup or none, decay_start = that
// warmup for every arm, grids.e10_steps.
TrainPoint e10_arm(const Grids& g, const std::string& placement, const std::string& lr, bool warmup, int seed);
std::string e10_arm_label(const TrainPoint& arm);  // "Post-LN, warmup 200", "Pre-LN, no warmup"
std::vector<TrainPoint> e10b_points(const Grids& g);
std::vector<TrainPoint> e10c_points(const Grids& g);
Section run_e10(const Context& ctx, const TrainingResults& translate, const TrainingResults& mlm);

// ---- training points of E3 / E4 / E5b-c / E6 / E7 ----
std::vector<TrainPoint> e3_points(const Grids& g);
std::vector<TrainPoint> e3_text_points(const Grids& g);
std::vector<TrainPoint> e4_points(const Grids& g);
std::vector<TrainPoint> e5_points(const Grids& g);
std::vector<TrainPoint> e6_points(const Grids& g);
std::vector<TrainPoint> e7_points(const Grids& g);
std::vector<TrainPoint> e8_points(const Grids& g);
std::vector<TrainPoint> e9_points(const Grids& g);  // a sweep of its own ("e9", on grids.e9_config)

Section run_e3(const Context& ctx, const TrainingResults& copy, const TrainingResults& text);
Section run_e4(const Context& ctx, const TrainingResults& copy);
Section run_e5(const Context& ctx, const TrainingResults& copy, bool train_part);
Section run_e6(const Context& ctx, const TrainingResults& copy, bool train_part);
Section run_e7(const Context& ctx, const TrainingResults& copy);
Section run_e8(const Context& ctx, const TrainingResults& copy);
Section run_e9(const Context& ctx, const TrainingResults& e9);
void append_e10b(const Context& ctx, const TrainingResults& translate, Section& s);
void append_e10c(const Context& ctx, const TrainingResults& mlm, Section& s);
// Mean validation curves of E10's arms over `seeds` with 95% bands, and the baseline as a line.
struct Baseline;
std::string e10_curves_figure(const Context& ctx, const TrainingResults& runs, const std::vector<TrainPoint>& arms,
                              const std::vector<int>& seeds, const Baseline& base, const std::string& stem,
                              const std::string& title);

}  // namespace normlab::xiong
