// The init-time claims of protocol v4 (xiong/registration.toml) on the confirmatory seeds, measured
// with the full suite's probe model and batches (grids.h; data seeds 1000 + seed for E1, 2000 +
// seed for E2, as in v3) and cached in DIR/cache/v4_init_probes.json:
//   E1a   Post-LN: b in ||dL/dW2|| ~ L^b over L >= 6 (the last layer's W2, the E1 depths); the
//         percentile bootstrap over seeds (4000 resamples): 95% interval reported, the 90% one
//         against [low, high] with p = (max(#{b <= low}, #{b >= high}) + 1) / (draws + 1)
//   E1b   Pre-LN: each seed's own fitted b, one-sample t (H0: b = 0), predicted below
//   E2a   Post-LN, L = 6: last / first layer ratio of ||E_batches[dL/dW]||_F (W1 or W2), log-ratio t
//         over seeds (H0: ratio = 1), predicted above
//   E2b   Pre-LN, the same ratio: two one-sided t tests of the log ratio within [ln low, ln high],
//         the 90% interval (as a ratio) inside [low, high]
// Decisions as every registered claim (registered_analysis.h: decide_registered).
#pragma once
#include <nlohmann/json.hpp>

#include "xiong/registered_analysis.h"
#include "xiong/report.h"

namespace normlab::xiong {

// {"seeds": [...], "depths": [...], "theorem1": measure_theorem1's JSON (no final-norm factors),
//  "profile": {"post" | "pre": [seed]{"w1_nom": [layer], "w2_nom": [layer]}} at L = 6}.
nlohmann::json measure_init_probes(const Context& ctx, const Registration& reg);

// One init-time claim from the probes' JSON (throws "[registration] ..." for a claim or primary
// test that no analysis here computes).
ClaimAnalysis analyse_init_claim(const Registration& reg, const RegisteredClaim& claim, const nlohmann::json& probes);

}  // namespace normlab::xiong
