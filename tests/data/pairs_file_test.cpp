// The TSV pairs file (data.source = "pairs:PATH"): parsing, tokenizers, the validation split,
// batches, and every kind of bad line named by file:line.
#include <gtest/gtest.h>

#include <set>

#include "data/seq2seq.h"
#include "data_test_util.h"

namespace normlab {
namespace {

using test::error_of;
using test::TempFile;

// Ten pairs "<n words>\t<the words reversed>"; the last one without a final newline.
std::string ten_pairs() {
  std::string text;
  const char* lines[] = {"a b\tb a",     "c\tc",         "d e f\tf e d",  "g h\th g",     "ab\tba",
                         "x y z w\tw z y x", "hello\tolleh", "q r\tr q",      "s t u\tu t s", "v\tv"};
  for (size_t i = 0; i < 10; ++i) text += std::string(lines[i]) + (i + 1 < 10 ? "\n" : "");
  return text;
}

TEST(PairsFile, ReadsPairsSplitsAndDecodes) {
  TempFile file("good.tsv", ten_pairs());
  auto ds = make_pairs_dataset(file.path(), "char", 0.2);
  // The characters of both sides of every line (tab and newline excluded).
  std::set<char> chars;
  for (const char ch : ten_pairs())
    if (ch != '\t' && ch != '\n') chars.insert(ch);
  const auto V0 = static_cast<int32_t>(chars.size());
  EXPECT_EQ(ds->tokenizer()->vocab_size(), V0);
  EXPECT_EQ(ds->vocab_size(), V0 + 3);
  EXPECT_EQ(ds->pair_tokens()->pad, V0);
  EXPECT_EQ(ds->pair_tokens()->bos, V0 + 1);
  EXPECT_EQ(ds->pair_tokens()->eos, V0 + 2);
  // The validation split is the last floor(10 * 0.2) = 2 lines, in file order.
  const auto val = ds->validation_pairs(100);
  ASSERT_EQ(val.size(), 2u);
  EXPECT_EQ(ds->tokenizer()->decode(val[0].source), "s t u");
  EXPECT_EQ(ds->tokenizer()->decode(val[0].target), "u t s");
  EXPECT_EQ(pair_text(*ds, val[1].target), "v");
  EXPECT_EQ(ds->validation_pairs(1).size(), 1u);
  // Batches draw only from their split.
  Generator gen(2);
  std::set<std::string> train_sources, val_sources;
  for (int rep = 0; rep < 20; ++rep) {
    const Batch t = ds->sample(false, 8, 8, gen), v = ds->sample(true, 8, 8, gen);
    const int64_t St = t.sources.shape()[1], Sv = v.sources.shape()[1];
    const auto ts = t.sources.to_ints(), vs = v.sources.to_ints();
    for (int64_t b = 0; b < 8; ++b) {
      std::vector<int32_t> row(ts.begin() + b * St, ts.begin() + (b + 1) * St), vrow(vs.begin() + b * Sv,
                                                                                       vs.begin() + (b + 1) * Sv);
      train_sources.insert(pair_text(*ds, row));  // pair_text stops at EOS
      val_sources.insert(pair_text(*ds, vrow));
    }
  }
  EXPECT_EQ(val_sources, (std::set<std::string>{"s t u", "v"}));
  EXPECT_EQ(train_sources.size(), 8u);
  EXPECT_EQ(train_sources.count("s t u") + train_sources.count("v"), 0u);
}

TEST(PairsFile, SameGeneratorStateSameBatch) {
  TempFile file("det.tsv", ten_pairs());
  auto ds = make_pairs_dataset(file.path(), "byte", 0.2);
  EXPECT_EQ(ds->vocab_size(), 259);
  Generator a(4), b(4);
  const Batch x = ds->sample(false, 6, 8, a), y = ds->sample(false, 6, 8, b);
  EXPECT_EQ(x.sources.to_ints(), y.sources.to_ints());
  EXPECT_EQ(x.source_padding.to_ints(), y.source_padding.to_ints());
  EXPECT_EQ(x.inputs.to_ints(), y.inputs.to_ints());
  EXPECT_EQ(x.targets.to_ints(), y.targets.to_ints());
}

TEST(PairsFile, CrLfAndFinalNewline) {
  auto ds = make_pairs_dataset_from_text("a\tb\r\nc d\te\r\n", "crlf.tsv", "char", 0.5);
  const auto val = ds->validation_pairs(5);
  ASSERT_EQ(val.size(), 1u);
  EXPECT_EQ(ds->tokenizer()->decode(val[0].source), "c d");
  EXPECT_EQ(ds->tokenizer()->decode(val[0].target), "e");
}

TEST(PairsFile, BadLinesAreNamedByFileAndLine) {
  const std::string ok = "a\tb\nc\td\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {ok + "no tab here\n", "bad.tsv:3: no tab"},
      {ok + "a\tb\tc\n", "bad.tsv:3: more than one tab"},
      {"x\ty\n\ty\n", "bad.tsv:2: the source (before the tab) is empty"},
      {ok + ok + "x\t\n", "bad.tsv:5: the target (after the tab) is empty"},
      {ok + "\n", "bad.tsv:3: no tab"},  // a blank line
      {ok + "a\xFF\tb\n", "bad.tsv:3: not valid UTF-8 (byte 0xFF at column 2)"},
      {"", "bad.tsv has no pairs"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string msg = error_of([&] { make_pairs_dataset_from_text(text, "bad.tsv", "char", 0.1); });
    EXPECT_NE(msg.find("[pairs] " + expected), std::string::npos) << msg;
  }
  // A real file: the message carries its path and the line.
  TempFile file("bad_line.tsv", ok + ok + "oops\n");
  const std::string msg = error_of([&] { make_pairs_dataset(file.path(), "char", 0.1); });
  EXPECT_NE(msg.find(file.path() + ":5: no tab"), std::string::npos) << msg;
}

TEST(PairsFile, TooLongPairsAreNamedByFileAndLine) {
  TempFile file("long.tsv", "ab\tc\nabcdef\tx\nq\tr\ns\tt\n");
  auto ds = make_pairs_dataset(file.path(), "char", 0.0);
  std::string msg = error_of([&] { ds->check_fits(6); });
  EXPECT_NE(msg.find(file.path() + ":2 does not fit in context 6: source 6 tokens + EOS = 7"), std::string::npos)
      << msg;
  EXPECT_NO_THROW(ds->check_fits(7));
  // sample() draws the long line sooner or later and names it.
  Generator gen(0);
  msg = error_of([&] {
    for (int i = 0; i < 100; ++i) ds->sample(false, 4, 6, gen);
  });
  EXPECT_NE(msg.find(file.path() + ":2"), std::string::npos) << msg;
  msg = error_of([&] { ds->sample(true, 1, 8, gen); });
  EXPECT_NE(msg.find("no validation pairs"), std::string::npos) << msg;
}

TEST(PairsFile, MakeDatasetSource) {
  TempFile file("src.tsv", ten_pairs());
  DataConfig c;
  c.source = "pairs:" + file.path();
  c.tokenizer = "byte";
  auto ds = make_dataset(c);
  ASSERT_NE(as_pair_dataset(*ds), nullptr);
  EXPECT_EQ(ds->vocab_size(), 259);
  EXPECT_EQ(as_pair_dataset(*ds)->validation_pairs(100).size(), 1u);  // floor(10 * 0.1)
  c.source = "pairs:";
  EXPECT_NE(error_of([&] { make_dataset(c); }).find("names no file"), std::string::npos);
  c.source = "pairs:/nonexistent/normlab/pairs.tsv";
  EXPECT_NE(error_of([&] { make_dataset(c); }).find("/nonexistent/normlab/pairs.tsv"), std::string::npos);
}

}  // namespace
}  // namespace normlab
