// The normlab binary's error paths: an unknown gradcheck op, and a config typo that must fail
// before a run directory exists.
#include <gtest/gtest.h>

#include <filesystem>

#include "command_util.h"
#include "test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;

TEST(Cli, GradcheckUnknownOpListsTheKnownOps) {
  const auto r = test::run_command(test::kNormlab + " gradcheck --op nope");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("unknown --op 'nope'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("known ops: all,"), std::string::npos) << r.output;
  const auto list = test::run_command(test::kNormlab + " gradcheck --list");
  ASSERT_EQ(list.exit_code, 0) << list.output;
  const std::string first_op = list.output.substr(0, list.output.find(' '));
  ASSERT_FALSE(first_op.empty());
  EXPECT_NE(r.output.find(first_op), std::string::npos) << "the message lists " << first_op;
}

TEST(Cli, TrainConfigTypoNamesFileLineAndKeyAndCreatesNoRun) {
  test::ScratchDir dir;
  const std::string config = dir.write("typo.toml",
                                       "[model]\nd_model = 16\nnorm_placment = \"post\"\n"
                                       "[train]\nout_dir = \"" + dir.file("runs") + "\"\n");
  // Run from the scratch directory so that a default "runs/" would show up there too.
  const auto r = test::run_command("cd " + dir.path().string() + " && " + test::kNormlab + " train " + config);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(config + ":3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("norm_placment"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("did you mean 'norm_placement'"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.file("runs")));
  // An override typo likewise.
  const auto o = test::run_command("cd " + dir.path().string() + " && " + test::kNormlab + " train " +
                                   dir.write("ok.toml", "[train]\nout_dir = \"" + dir.file("runs") + "\"\n") +
                                   " optim.lr=fast");
  EXPECT_NE(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("override 'optim.lr=fast'"), std::string::npos) << o.output;
  EXPECT_FALSE(fs::exists(dir.file("runs")));
}

}  // namespace
}  // namespace normlab
