// The normlab binary's error paths: an unknown gradcheck op (with a did-you-mean), and a config typo that must fail
// before a run directory exists.
#include <gtest/gtest.h>

#include <filesystem>

#include "command_util.h"
#include "test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;

// An unknown op: the nearest registered name when it is a plausible typo, and where the list is.
TEST(Cli, GradcheckUnknownOpSuggestsTheNearestOp) {
  const auto typo = test::run_command(test::kNormlab + " gradcheck --op layernorm");
  EXPECT_EQ(typo.exit_code, 2) << typo.output;
  EXPECT_NE(typo.output.find("unknown --op 'layernorm' (did you mean 'layer_norm'?)"), std::string::npos)
      << typo.output;
  EXPECT_NE(typo.output.find("normlab gradcheck --list"), std::string::npos) << typo.output;
  const auto far = test::run_command(test::kNormlab + " gradcheck --op xyzzy");
  EXPECT_EQ(far.exit_code, 2) << far.output;
  EXPECT_NE(far.output.find("unknown --op 'xyzzy'"), std::string::npos) << far.output;
  EXPECT_EQ(far.output.find("did you mean"), std::string::npos) << "nothing is close to 'xyzzy': " << far.output;
  const auto list = test::run_command(test::kNormlab + " gradcheck --list");
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("layer_norm "), std::string::npos) << list.output;
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
