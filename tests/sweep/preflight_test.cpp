// Everything `normlab train` can check is checked before the run directory exists (issue 36 item
// 2): a start that fails leaves no directory behind to block the next attempt. One case each: the
// schedule against train.steps, the training and the validation split against the context, the
// memory estimate, the tokenizer against the data.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "command_util.h"
#include "config/toml_codec.h"
#include "sweep/exit_codes.h"
#include "test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;

struct Preflight {
  test::ScratchDir dir;
  std::string config = dir.write("tiny.toml", test::tiny_config_toml(dir.file("runs")));

  // Runs `normlab train tiny.toml <overrides>` and expects it to fail with `message`, leaving no
  // run directory (runs/tiny) behind.
  void expect_refused_before_writing(const std::string& overrides, const std::string& message) const {
    const test::CommandResult r = test::run_command(test::kNormlab + " train " + config + " " + overrides);
    EXPECT_EQ(r.exit_code, exit_codes::kFailed) << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(dir.path() / "runs" / "tiny")) << "a failed start left its run directory: " << r.output;
  }
  // data.source = a file holding `text`, read with the char tokenizer.
  std::string text_source(const std::string& text) const {
    return "'data.source=" + toml_quote(dir.write("data.txt", text)) + "' data.tokenizer=char";  // no ' in it
  }
};

TEST(Preflight, ScheduleWarmupLongerThanTheRunNamesTheRealKeys) {
  Preflight p;
  p.expect_refused_before_writing("schedule.kind=cosine schedule.warmup_steps=30 train.steps=5",
                                  "[schedule] schedule.warmup_steps (30) must be < train.steps (5)");
}

TEST(Preflight, TrainingSplitShorterThanTheContext) {
  Preflight p;  // 6 characters: 6 training tokens (val_fraction 0.1 rounds down to 0), context 8
  p.expect_refused_before_writing(p.text_source("hello\n"), "the training split");
}

TEST(Preflight, ValidationSplitShorterThanTheContext) {
  Preflight p;  // 60 characters: 54 training tokens, 6 validation tokens, context 8
  p.expect_refused_before_writing(p.text_source(std::string(59, 'a') + "\n"), "the validation split");
}

TEST(Preflight, MemoryEstimateAboveWhatIsAvailable) {
  Preflight p;
  p.expect_refused_before_writing("model.d_model=65536 model.d_ff=262144 model.n_layers=64",
                                  "exceeds the");
}

TEST(Preflight, TokenizerAgainstTheData) {
  Preflight p;  // the char tokenizer reads UTF-8: a stray 0xFF byte is refused, naming the file
  p.expect_refused_before_writing(p.text_source(std::string(200, 'a') + "\xff\n"), "is not valid UTF-8");
}

}  // namespace
}  // namespace normlab
