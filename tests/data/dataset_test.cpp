// Text dataset windows and splits, the copy task's structure, and make_dataset's sources.
#include <gtest/gtest.h>

#include <set>

#include "data/dataset.h"
#include "data_test_util.h"

namespace normlab {
namespace {

using test::error_of;
using test::TempFile;

std::string random_text(size_t n, const std::string& alphabet, uint64_t seed) {
  Generator g(seed);
  std::string s;
  for (size_t i = 0; i < n; ++i) s += alphabet[g.below(alphabet.size())];
  return s;
}

TEST(TextDataset, TargetsAreInputsShiftedByOneInTheTrainSplit) {
  const std::string text = random_text(2000, "abcdefghijklmnopqrstuvwxyz .,\n", 1);
  auto ds = make_text_dataset(text, "char", 0.1, "test text");
  const std::vector<int32_t> stream = ds->tokenizer()->encode(text);
  const int64_t n_train = 2000 - 200, T = 12, B = 16;
  Generator gen(3);
  const Batch batch = ds->sample(false, B, T, gen);
  ASSERT_EQ(batch.inputs.shape(), (Shape{B, T}));
  ASSERT_EQ(batch.targets.shape(), (Shape{B, T}));
  const auto in = batch.inputs.to_ints(), tg = batch.targets.to_ints();
  for (int64_t b = 0; b < B; ++b) {
    bool found = false;
    for (int64_t s = 0; s + T + 1 <= n_train && !found; ++s) {
      bool match = true;
      for (int64_t t = 0; t < T && match; ++t)
        match = in[b * T + t] == stream[s + t] && tg[b * T + t] == stream[s + t + 1];
      found = match;
    }
    EXPECT_TRUE(found) << "row " << b << " is not a window of the training split";
  }
}

TEST(TextDataset, SameSeedSameBatchDifferentSeedDifferentBatch) {
  auto ds = make_text_dataset(random_text(5000, "abcdefgh", 2), "byte", 0.1, "test text");
  Generator a(11), b(11), c(12);
  const Batch x = ds->sample(false, 4, 32, a), y = ds->sample(false, 4, 32, b), z = ds->sample(false, 4, 32, c);
  EXPECT_EQ(x.inputs.to_ints(), y.inputs.to_ints());
  EXPECT_EQ(x.targets.to_ints(), y.targets.to_ints());
  EXPECT_NE(x.inputs.to_ints(), z.inputs.to_ints());
  // The stream continues: the next batch differs from the first.
  EXPECT_NE(ds->sample(false, 4, 32, a).inputs.to_ints(), x.inputs.to_ints());
}

TEST(TextDataset, ValidationWindowsComeOnlyFromTheValidationSplit) {
  // 300 train characters from "abc", then 100 validation characters from "xyz" (val_fraction 0.25).
  const std::string text = random_text(300, "abc", 4) + random_text(100, "xyz", 5);
  auto ds = make_text_dataset(text, "char", 0.25, "test text");
  const auto val_ids = ds->tokenizer()->encode("xyz"), train_ids = ds->tokenizer()->encode("abc");
  const std::set<int32_t> val_set(val_ids.begin(), val_ids.end()), train_set(train_ids.begin(), train_ids.end());
  Generator gen(6);
  for (int rep = 0; rep < 5; ++rep) {
    const Batch v = ds->sample(true, 16, 20, gen), t = ds->sample(false, 16, 20, gen);
    for (const auto& ids : {v.inputs.to_ints(), v.targets.to_ints()})
      for (int32_t id : ids) ASSERT_TRUE(val_set.count(id)) << "validation batch holds a training token";
    for (const auto& ids : {t.inputs.to_ints(), t.targets.to_ints()})
      for (int32_t id : ids) ASSERT_TRUE(train_set.count(id)) << "training batch holds a validation token";
  }
}

TEST(TextDataset, TooShortSplitNamesSourceAndLengths) {
  auto ds = make_text_dataset(random_text(100, "ab", 7), "char", 0.1, "'tiny.txt'");
  Generator gen(0);
  const std::string msg = error_of([&] { ds->sample(true, 1, 10, gen); });
  EXPECT_NE(msg.find("'tiny.txt'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("10 tokens"), std::string::npos) << msg;
  EXPECT_NE(msg.find("11"), std::string::npos) << msg;
  EXPECT_NO_THROW(ds->sample(true, 1, 9, gen));  // exactly T + 1 = 10 validation tokens
  EXPECT_THROW(make_text_dataset("abc", "char", 1.0, "x"), Error);
}

TEST(CopyTask, SecondHalfCopiesFirstAndOnlyCopiedTargetsCount) {
  const int64_t L = 8, V = 16, B = 32;
  auto ds = make_copy_task(L, V);
  EXPECT_EQ(ds->vocab_size(), V);
  EXPECT_EQ(ds->tokenizer(), nullptr);
  Generator gen(9);
  for (bool validation : {false, true}) {
    const Batch batch = ds->sample(validation, B, 2 * L, gen);
    ASSERT_EQ(batch.inputs.shape(), (Shape{B, 2 * L}));
    const auto in = batch.inputs.to_ints(), tg = batch.targets.to_ints();
    std::set<int32_t> symbols_seen;
    for (int64_t b = 0; b < B; ++b) {
      const int32_t* x = &in[b * 2 * L];
      const int32_t* y = &tg[b * 2 * L];
      int64_t counted = 0;
      for (int64_t t = 0; t < 2 * L; ++t) counted += y[t] != -1;
      EXPECT_EQ(counted, L);
      EXPECT_EQ(x[L], V - 1);  // separator
      for (int64_t i = 0; i < L; ++i) {
        ASSERT_GE(x[i], 0);
        ASSERT_LT(x[i], V - 1);  // symbols never use the separator id
        symbols_seen.insert(x[i]);
        EXPECT_EQ(y[i], -1);
        EXPECT_EQ(y[L + i], x[i]);                 // copied target = first-half token
        if (i + 1 < L) {
          EXPECT_EQ(x[L + 1 + i], x[i]);  // second half of the inputs copies too
        }
      }
    }
    EXPECT_GT(symbols_seen.size(), 10u);  // draws cover the symbol range
  }
  const std::string msg = error_of([&] { ds->sample(false, 1, 10, gen); });
  EXPECT_NE(msg.find("16"), std::string::npos) << msg;
  EXPECT_NE(msg.find("10"), std::string::npos) << msg;
}

TEST(CopyTask, DeterministicPerSeed) {
  auto ds = make_copy_task(16, 64);
  Generator a(1), b(1), c(2);
  EXPECT_EQ(ds->sample(false, 4, 32, a).inputs.to_ints(), ds->sample(false, 4, 32, b).inputs.to_ints());
  EXPECT_NE(ds->sample(false, 4, 32, a).inputs.to_ints(), ds->sample(false, 4, 32, c).inputs.to_ints());
}

TEST(MakeDataset, SourcesAndErrorsNamingThePath) {
  DataConfig c;
  c.source = "copy";
  EXPECT_EQ(make_dataset(c)->vocab_size(), 64);

  TempFile good("good.txt", random_text(500, "ab\n", 8) + "\xC3\xA9");
  c.source = good.path();
  auto ds = make_dataset(c);
  EXPECT_EQ(ds->vocab_size(), 4);
  Generator gen(0);
  EXPECT_NO_THROW(ds->sample(false, 2, 8, gen));

  c.source = "/nonexistent/normlab/corpus.txt";
  std::string msg = error_of([&] { make_dataset(c); });
  EXPECT_NE(msg.find("/nonexistent/normlab/corpus.txt"), std::string::npos) << msg;

  TempFile bad("bad.txt", "abc\xFF" "def");
  c.source = bad.path();
  msg = error_of([&] { make_dataset(c); });
  EXPECT_NE(msg.find(bad.path()), std::string::npos) << msg;
  EXPECT_NE(msg.find("UTF-8"), std::string::npos) << msg;
  EXPECT_NE(msg.find("offset 3"), std::string::npos) << msg;
}

}  // namespace
}  // namespace normlab
