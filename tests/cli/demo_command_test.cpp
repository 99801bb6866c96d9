// `normlab demo half-rmsnorm` (cli/demo_command.cpp): it runs, exits 0, and prints the seed's
// numbers: the fused float16 RMSNorm of (300, 1, 1, 1) close to the exact (2.0, 0.0067, ...), the
// naive float16 one all zeros. The expected values are computed here in double.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "command_util.h"
#include "sweep/exit_codes.h"

namespace normlab {
namespace {

// The numbers after `label` on the first line containing it at or after `from`.
std::vector<double> values_after(const std::string& output, const std::string& label, size_t from) {
  const size_t at = output.find(label, from);
  if (at == std::string::npos) return {};
  std::istringstream line(output.substr(at + label.size(), output.find('\n', at) - at - label.size()));
  std::vector<double> values;
  for (double v; line >> v;) values.push_back(v);
  return values;
}

TEST(DemoCommand, HalfRmsNormPrintsTheSeedExample) {
  const test::CommandResult r = test::run_command(test::kNormlab + " demo half-rmsnorm");
  ASSERT_EQ(r.exit_code, exit_codes::kDone) << r.output;
  const size_t first = r.output.find("x = (300, 1, 1, 1)");
  ASSERT_NE(first, std::string::npos) << r.output;
  const double rstd = 1.0 / std::sqrt((300.0 * 300.0 + 3.0) / 4.0 + 1e-6);
  const std::vector<double> fused = values_after(r.output, "fused rms_norm (float16):", first);
  const std::vector<double> naive = values_after(r.output, "naive float16 ops:", first);
  ASSERT_EQ(fused.size(), 4u) << r.output;
  ASSERT_EQ(naive.size(), 4u) << r.output;
  EXPECT_NEAR(fused[0], 300.0 * rstd, 1e-3);  // float16's spacing at 2 is 2^-9
  for (int i = 1; i < 4; ++i) EXPECT_NEAR(fused[i], rstd, 4e-6);  // spacing at 0.0067 is 2^-18
  for (double v : naive) EXPECT_EQ(v, 0.0);
  const size_t second = r.output.find("x = (256, 0, 0, 0)");
  ASSERT_NE(second, std::string::npos) << r.output;
  EXPECT_EQ(values_after(r.output, "fused rms_norm (float16):", second), (std::vector<double>{2, 0, 0, 0}));
  EXPECT_EQ(values_after(r.output, "naive float16 ops:", second), (std::vector<double>{0, 0, 0, 0}));
  EXPECT_NE(r.output.find("float32"), std::string::npos) << r.output;
}

TEST(DemoCommand, UnknownDemoIsAUsageError) {
  EXPECT_EQ(test::run_command(test::kNormlab + " demo no-such-demo").exit_code, exit_codes::kUsage);
  EXPECT_EQ(test::run_command(test::kNormlab + " demo").exit_code, exit_codes::kUsage);
}

}  // namespace
}  // namespace normlab
