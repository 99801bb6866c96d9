// `normlab bleu HYP REF [REF ...]` (cli/bleu_command.cpp) on files: the scores and signatures
// sacreBLEU prints for the same corpus, --json, and the errors that name the file (and line).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "command_util.h"
#include "data/bleu.h"
#include "data/bleu_bootstrap.h"
#include "test_util.h"

namespace normlab {
namespace {

// The corpus of tests/data/sacrebleu_reference.py's "multi_sentence_two_references" case, whose
// scores sacreBLEU 2.6.0 printed (BLEU().corpus_score, CHRF().corpus_score and
// CHRF(word_order=2).corpus_score of these lines): 76.5165900713387, 86.6009974453961 and
// 85.5647462755427.
const char* kHypotheses = "The quick brown fox jumps over the lazy dog.\nA stitch in time saves nine!\n"
                          "w1 w2 w3 w4 w5\nIt costs $3,000 (or 2.5k) -- cheap.\n";
const char* kReferences1 = "The quick brown fox jumped over the lazy dog.\nA stitch in time saves nine.\n"
                           "w1 w2 w4 w3 w5\nIt costs $3,000 (or 2.5k) - cheap!";  // no final newline
const char* kReferences2 = "A quick brown fox jumps over a lazy dog!\nSaving nine stitches in time!\n"
                           "w1 w2 w3 w5 w4 w6\nIt is cheap: $3,000 (or 2.5k).\n";

std::string bleu(const std::string& arguments) { return test::kNormlab + " bleu " + arguments; }

// --against: the paired bootstrap of data/bleu_bootstrap.h on the files' segments, printed and in
// the JSON; against itself the difference is 0 in every resample; another line count is an error.
TEST(BleuCommand, AgainstAnotherSystemPrintsThePairedBootstrap) {
  test::ScratchDir dir;
  const std::string refs = dir.write("ref1.txt", kReferences1) + " " + dir.write("ref2.txt", kReferences2);
  const std::string other = dir.write("other.txt", "The quick fox.\nA stitch.\nw1 w2\nIt costs.\n");
  const std::string hyp = dir.write("hyp.txt", kHypotheses);
  const auto r = test::run_command(bleu(hyp + " " + refs + " --against " + other + " --resamples 50 --seed 7 --json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json paired = nlohmann::json::parse(r.output).back();
  const std::vector<std::vector<std::string>> ref_lines = {
      {"The quick brown fox jumped over the lazy dog.", "A stitch in time saves nine.", "w1 w2 w4 w3 w5",
       "It costs $3,000 (or 2.5k) - cheap!"},
      {"A quick brown fox jumps over a lazy dog!", "Saving nine stitches in time!", "w1 w2 w3 w5 w4 w6",
       "It is cheap: $3,000 (or 2.5k)."}};
  const std::vector<std::string> hyp_lines = {"The quick brown fox jumps over the lazy dog.",
                                              "A stitch in time saves nine!", "w1 w2 w3 w4 w5",
                                              "It costs $3,000 (or 2.5k) -- cheap."};
  const std::vector<std::string> other_lines = {"The quick fox.", "A stitch.", "w1 w2", "It costs."};
  const PairedBootstrap want = paired_bootstrap_bleu(segment_bleu_stats(hyp_lines, ref_lines),
                                                     segment_bleu_stats(other_lines, ref_lines), 2, 50, 7);
  EXPECT_EQ(paired["name"], "paired_bootstrap");
  EXPECT_DOUBLE_EQ(paired["difference"].get<double>(), want.difference);
  EXPECT_DOUBLE_EQ(paired["low"].get<double>(), want.low);
  EXPECT_DOUBLE_EQ(paired["share_not_better"].get<double>(), want.share_not_better);
  const auto self = test::run_command(bleu(hyp + " " + refs + " --against " + hyp));
  ASSERT_EQ(self.exit_code, 0) << self.output;
  EXPECT_NE(self.output.find("(1000 resamples, seed 12345): BLEU 76.52 - 76.52 = +0.00, 95% interval [+0.00, +0.00]; "
                             "not better in 100.0% of resamples"), std::string::npos) << self.output;
  const auto short_file = test::run_command(bleu(hyp + " " + refs + " --against " + dir.write("s.txt", "one\n")));
  EXPECT_EQ(short_file.exit_code, 1);
  EXPECT_NE(short_file.output.find("s.txt"), std::string::npos) << short_file.output;
}

TEST(BleuCommand, PrintsSacreBleusScoresWithSignatures) {
  test::ScratchDir dir;
  const std::string files = dir.write("hyp.txt", kHypotheses) + " " + dir.write("ref1.txt", kReferences1) + " " +
                            dir.write("ref2.txt", kReferences2);
  const std::string version = std::string("version:") + kSignatureVersion;
  const auto r = test::run_command(bleu(files));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("BLEU 76.52 (nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|" + version + ")  97.0/79.3/72.0/"
                          "61.9 (BP = 1.000 ratio = 1.000 hyp_len = 33 ref_len = 33)\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("chrF2 86.60 (nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|" + version + ")\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("chrF2++ 85.56 (nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|" + version + ")\n"),
            std::string::npos)
      << r.output;

  const auto j = test::run_command(bleu(files + " --json"));
  ASSERT_EQ(j.exit_code, 0) << j.output;
  const nlohmann::json scores = nlohmann::json::parse(j.output);
  ASSERT_EQ(scores.size(), 3u) << j.output;
  EXPECT_EQ(scores[0]["name"], "BLEU");
  EXPECT_NEAR(scores[0]["score"].get<double>(), 76.5165900713387, 1e-9);
  EXPECT_EQ(scores[0]["hyp_len"], 33);
  EXPECT_EQ(scores[1]["name"], "chrF2");
  EXPECT_NEAR(scores[1]["score"].get<double>(), 86.6009974453961, 1e-9);
  EXPECT_EQ(scores[2]["name"], "chrF2++");
  EXPECT_NEAR(scores[2]["score"].get<double>(), 85.5647462755427, 1e-9);
  EXPECT_EQ(scores[2]["signature"], "nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|" + version);
}

TEST(BleuCommand, ErrorsNameTheFile) {
  test::ScratchDir dir;
  const std::string hyp = dir.write("hyp.txt", kHypotheses);
  const std::string ref = dir.write("ref.txt", kReferences1);
  const std::string short_ref = dir.write("short.txt", "one line\n");
  const auto mismatch = test::run_command(bleu(hyp + " " + ref + " " + short_ref));
  EXPECT_EQ(mismatch.exit_code, 1) << mismatch.output;
  EXPECT_NE(mismatch.output.find("error: [bleu] " + short_ref + " has 1 lines but " + hyp + " has 4"),
            std::string::npos)
      << mismatch.output;

  const auto missing = test::run_command(bleu(hyp + " " + dir.file("missing.txt")));
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(missing.output.find("error: [bleu] " + dir.file("missing.txt") + ": cannot open file"), std::string::npos)
      << missing.output;

  const std::string bad = dir.write("bad.txt", "fine\nstill fine\nnot \xFF fine\nfine\n");
  const auto invalid = test::run_command(bleu(hyp + " " + ref + " " + bad));
  EXPECT_EQ(invalid.exit_code, 1) << invalid.output;
  EXPECT_NE(invalid.output.find("error: [bleu] " + bad + ":3: not valid UTF-8"), std::string::npos) << invalid.output;

  const auto empty = test::run_command(bleu(dir.write("empty.txt", "") + " " + ref));
  EXPECT_EQ(empty.exit_code, 1) << empty.output;
  EXPECT_NE(empty.output.find("has no lines"), std::string::npos) << empty.output;

  const auto no_reference = test::run_command(bleu(hyp));  // a usage error: exit 2 with the hint
  EXPECT_EQ(no_reference.exit_code, 2) << no_reference.output;
  EXPECT_NE(no_reference.output.find("--help"), std::string::npos) << no_reference.output;
}

}  // namespace
}  // namespace normlab
