// The command line's own numbers and files (sample, sweep.csv) are checked, and their errors name
// the option or the file (the config's values: config_errors_test.cpp).
#include <gtest/gtest.h>

#include <filesystem>

#include "command_util.h"
#include "sweep/sweep.h"
#include "test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using test::ScratchDir;

TEST(CliValues, SampleChecksItsNumbersBeforeAnything) {
  for (const char* temperature : {"nan", "inf", "-1"}) {
    const auto r = test::run_command(test::kNormlab + " sample /nonexistent --temperature " + temperature);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("[sample] --temperature must be a finite number >= 0 (0 = greedy), got"), std::string::npos)
        << r.output;
  }
  const auto tokens = test::run_command(test::kNormlab + " sample /nonexistent --tokens -5");
  EXPECT_NE(tokens.output.find("[sample] --tokens must be >= 0, got -5"), std::string::npos) << tokens.output;
}

TEST(CliValues, DamagedTokenizerIsNamed) {
  ScratchDir dir;
  const std::string text = dir.write("text.txt", std::string(2000, 'a') + std::string(2000, 'b'));
  const std::string config = dir.write("t.toml", test::tiny_config_toml(dir.file("runs")));
  const auto trained = test::run_command(test::kNormlab + " train " + config + " data.source=\"" + text + "\" --quiet");
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  const fs::path tokenizer = dir.path() / "runs" / "tiny" / "tokenizer.json";
  ASSERT_TRUE(fs::exists(tokenizer));
  std::ofstream(tokenizer, std::ios::trunc) << "{\"kind\": 3}";
  const auto r = test::run_command(test::kNormlab + " sample " + (dir.path() / "runs" / "tiny").string() + " --tokens 2");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("[sample] " + tokenizer.string() + ": [tokenizer]"), std::string::npos) << r.output;
}

TEST(CliValues, SweepCsvStepThatIsNotAStepIsNamed) {
  ScratchDir dir;
  const std::string header = "name,status,diverged_step,final_train_loss,final_val_loss,best_val_loss,wall_s,run_dir,"
                             "fingerprint,error\n";
  dir.write("s.csv", header + "a,diverged,1e30,1,1,1,1,r,f,\n");
  EXPECT_EQ(error_of([&] { read_sweep_csv(dir.file("s.csv")); }),
            "[sweep] " + dir.file("s.csv") + ":2: diverged_step '1e30' is not a step number");
}

}  // namespace
}  // namespace normlab
