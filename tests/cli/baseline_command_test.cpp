// `normlab baseline CONFIG` (cli/baseline_command.cpp): on a text whose answer is known it prints
// one line per order with the right loss; the copy task, which has no text, is a usage error.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "command_util.h"
#include "sweep/exit_codes.h"

namespace normlab {
namespace {

// The loss printed on the line of `order` ("    1  0.0123").
double loss_of_order(const std::string& output, int order) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    int o = -1;
    double loss = NAN;
    if (fields >> o >> loss && o == order && fields.eof()) return loss;
  }
  return NAN;
}

TEST(BaselineCommand, PrintsEachOrdersValidationLoss) {
  const auto dir = std::filesystem::temp_directory_path() / "normlab_baseline_test";
  std::filesystem::create_directories(dir);
  // "abc" repeated: three characters, a deterministic cycle. The validation tenth is the same
  // cycle, so order 0 costs about ln 3 and order 1 almost nothing.
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "abc";
  std::ofstream(dir / "cycle.txt") << text;
  std::ofstream(dir / "cfg.toml") << test::tiny_config_toml(dir.string());
  const test::CommandResult r = test::run_command(test::kNormlab + " baseline " + (dir / "cfg.toml").string() +
                                                  " data.source=" + (dir / "cycle.txt").string() +
                                                  " --orders 0,1");
  ASSERT_EQ(r.exit_code, exit_codes::kDone) << r.output;
  EXPECT_NE(r.output.find("vocabulary 3"), std::string::npos) << r.output;
  EXPECT_NEAR(loss_of_order(r.output, 0), std::log(3.0), 1e-3) << r.output;
  EXPECT_LT(loss_of_order(r.output, 1), 0.01) << r.output;
  EXPECT_TRUE(std::isnan(loss_of_order(r.output, 2))) << "order 2 was not asked for\n" << r.output;

  const test::CommandResult copy = test::run_command(test::kNormlab + " baseline " + (dir / "cfg.toml").string());
  EXPECT_EQ(copy.exit_code, exit_codes::kUsage) << copy.output;
  EXPECT_NE(copy.output.find("copy task"), std::string::npos) << copy.output;
}

}  // namespace
}  // namespace normlab
