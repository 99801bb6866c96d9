// The v3 -> v4 table of the confirmatory report (xiong/v3_comparison.h): which v3 rows a v4 claim
// replaces, and whether its verdict was kept, changed, is new or is not decided yet.
#include <gtest/gtest.h>

#include "xiong/v3_comparison.h"

namespace normlab::xiong {
namespace {

const nlohmann::json kV3 = nlohmann::json::parse(R"([
  {"id": "E3a@1e-3", "verdict": "reproduced", "estimate": 1.5, "ci_low": 1.0, "ci_high": 2.0},
  {"id": "E3a@1e-3x", "verdict": "contradicted", "estimate": 9, "ci_low": 8, "ci_high": 10},
  {"id": "E3d@1e-3.to0.5", "verdict": "reproduced", "estimate": 0.4, "ci_low": 0.3, "ci_high": 0.5},
  {"id": "E3d@1e-3.to0.1", "verdict": "inconclusive", "estimate": 0.9, "ci_low": 0.5, "ci_high": 1.3},
  {"id": "E2b.W1", "verdict": "contradicted", "estimate": 0.7, "ci_low": 0.6, "ci_high": 0.8}
])");

TEST(V3Comparison, AClaimReplacesItsOwnIdAndItsDottedSuffixesOnly) {
  EXPECT_EQ(v3_rows_of("E3a@1e-3", kV3).size(), 1u);  // not E3a@1e-3x
  const auto e3d = v3_rows_of("E3d@1e-3", kV3);
  ASSERT_EQ(e3d.size(), 2u);
  EXPECT_EQ(e3d[0]["id"], "E3d@1e-3.to0.5");
  EXPECT_TRUE(v3_rows_of("E3h@3e-2", kV3).empty());
}

ClaimAnalysis analysed(const RegisteredClaim& claim, const std::string& verdict, double estimate) {
  ClaimAnalysis a;
  a.claim = &claim;
  a.verdict = verdict;
  a.estimate.estimate = estimate;
  a.estimate.low = estimate - 0.1;
  a.estimate.high = estimate + 0.1;
  a.estimate.n = 8;
  return a;
}

TEST(V3Comparison, AnEstimateWithinTwoFoldOrOfTheOtherSignIsSaidSo) {
  RegisteredClaim e3a;
  e3a.id = "E3a@1e-3";
  const std::string near = v3_to_v4_table({analysed(e3a, "reproduced", 2.9)}, kV3);
  EXPECT_NE(near.find("| kept |"), std::string::npos) << near;  // 2.9 / 1.5 < 2
  const std::string flipped = v3_to_v4_table({analysed(e3a, "contradicted", -0.5)}, kV3);
  EXPECT_NE(flipped.find("| changed; the estimate changed sign |"), std::string::npos) << flipped;
  const std::string smaller = v3_to_v4_table({analysed(e3a, "reproduced", 0.05)}, kV3);
  EXPECT_NE(smaller.find("| kept; the estimate moved more than 2x (30x smaller) |"), std::string::npos) << smaller;
}

TEST(V3Comparison, TheTableSaysKeptChangedNewOrNotYetDecided) {
  RegisteredClaim e3a, e3d, e2b, e3h;
  e3a.id = "E3a@1e-3";
  e3d.id = "E3d@1e-3";
  e2b.id = "E2b.W1";
  e3h.id = "E3h@3e-2";
  const std::string table = v3_to_v4_table(
      {analysed(e3a, "reproduced", 4.11), analysed(e3d, "reproduced", 675), analysed(e2b, "incomplete", NAN),
       analysed(e3h, "contradicted", 0.15)},
      kV3);
  EXPECT_NE(table.find("| E3a@1e-3 | reproduced | 4.11 [4.01, 4.21] | E3a@1e-3: reproduced 1.5 [1, 2] | kept; the "
                       "estimate moved more than 2x (2.7x larger) |"),
            std::string::npos) << table;
  // one of E3d's two v3 rows was inconclusive: the verdict changed
  EXPECT_NE(table.find("E3d@1e-3.to0.5: reproduced 0.4 [0.3, 0.5]; E3d@1e-3.to0.1: inconclusive 0.9 [0.5, 1.3] | "
                       "changed |"),
            std::string::npos) << table;
  EXPECT_NE(table.find("| E2b.W1 | incomplete | - [-, -] | E2b.W1: contradicted 0.7 [0.6, 0.8] | not yet decided |"),
            std::string::npos) << table;
  EXPECT_NE(table.find("| E3h@3e-2 | contradicted | 0.15 [0.05, 0.25] | - | new in v4 |"), std::string::npos) << table;
}

}  // namespace
}  // namespace normlab::xiong
