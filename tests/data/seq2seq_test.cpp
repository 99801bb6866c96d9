// Sequence-to-sequence batches (data/seq2seq.h): the exact layout of packed pairs, the layout
// invariants of every source's batches, determinism, the synthetic tasks' rules, the train/val
// split, and make_dataset's wiring.
#include <gtest/gtest.h>

#include <set>

#include "data/bleu.h"
#include "data/seq2seq.h"
#include "data_test_util.h"

namespace normlab {
namespace {

using test::error_of;

// Layout invariants of one batch (see data/seq2seq.h); returns the rows' (source, target) pairs.
std::vector<TokenPair> check_layout(const Batch& batch, const PairTokens& tok) {
  const int64_t B = batch.inputs.shape()[0], T = batch.inputs.shape()[1], S = batch.sources.shape()[1];
  EXPECT_EQ(batch.targets.shape(), (Shape{B, T}));
  EXPECT_EQ(batch.sources.shape(), (Shape{B, S}));
  EXPECT_EQ(batch.source_padding.shape(), (Shape{B, S}));
  const auto src = batch.sources.to_ints(), pad = batch.source_padding.to_ints();
  const auto in = batch.inputs.to_ints(), tg = batch.targets.to_ints();
  std::vector<TokenPair> pairs(static_cast<size_t>(B));
  int64_t longest_source = 0, longest_target = 0;
  for (int64_t b = 0; b < B; ++b) {
    int64_t s = 0;
    for (; s < S && src[b * S + s] < tok.pad; ++s) pairs[b].source.push_back(src[b * S + s]);
    EXPECT_LT(s, S) << "row " << b << ": no EOS in the source";
    if (s < S) {
      EXPECT_EQ(src[b * S + s], tok.eos) << "row " << b;
    }
    for (int64_t k = 0; k < S; ++k) {
      EXPECT_EQ(pad[b * S + k], src[b * S + k] == tok.pad ? 1 : 0) << "row " << b << " position " << k;
      EXPECT_EQ(pad[b * S + k], k > s ? 1 : 0) << "row " << b << " position " << k;
    }
    int64_t t = 0;
    for (; t < T && tg[b * T + t] >= 0 && tg[b * T + t] < tok.pad; ++t) pairs[b].target.push_back(tg[b * T + t]);
    EXPECT_LT(t, T) << "row " << b << ": no EOS target";
    if (t < T) {
      EXPECT_EQ(tg[b * T + t], tok.eos) << "row " << b;
    }
    EXPECT_EQ(in[b * T], tok.bos) << "row " << b;
    for (int64_t k = 1; k < T; ++k) {
      EXPECT_EQ(in[b * T + k], k <= t ? tg[b * T + k - 1] : tok.pad) << "row " << b << " position " << k;
      EXPECT_EQ(tg[b * T + k] == -1, in[b * T + k] == tok.pad) << "row " << b << " position " << k;
    }
    longest_source = std::max(longest_source, s + 1);
    longest_target = std::max(longest_target, t + 1);
  }
  EXPECT_EQ(S, longest_source);
  EXPECT_EQ(T, longest_target);
  return pairs;
}

TEST(PackPairs, ExactLayout) {
  const TokenPair a{{1, 2, 3}, {5}}, b{{4}, {6, 7, 8, 9}};
  const PairTokens tok{10, 11, 12};
  const Batch batch = pack_pairs({&a, &b}, tok, 5, [](size_t) { return std::string("x"); }, "test");
  ASSERT_EQ(batch.sources.shape(), (Shape{2, 4}));
  ASSERT_EQ(batch.inputs.shape(), (Shape{2, 5}));
  EXPECT_EQ(batch.sources.to_ints(), (std::vector<int32_t>{1, 2, 3, 12, /**/ 4, 12, 10, 10}));
  EXPECT_EQ(batch.source_padding.to_ints(), (std::vector<int32_t>{0, 0, 0, 0, /**/ 0, 0, 1, 1}));
  EXPECT_EQ(batch.inputs.to_ints(), (std::vector<int32_t>{11, 5, 10, 10, 10, /**/ 11, 6, 7, 8, 9}));
  EXPECT_EQ(batch.targets.to_ints(), (std::vector<int32_t>{5, 12, -1, -1, -1, /**/ 6, 7, 8, 9, 12}));
  EXPECT_EQ(batch.sources.dtype(), DType::I32);
  EXPECT_EQ(batch.source_padding.dtype(), DType::I32);
  // Context 4 is one short for b's target: the error names the pair.
  const std::string msg = error_of([&] {
    pack_pairs({&a, &b}, tok, 4, [](size_t i) { return "pair #" + std::to_string(i); }, "test");
  });
  EXPECT_NE(msg.find("[test] the pair at pair #1 does not fit in context 4"), std::string::npos) << msg;
}

TEST(Seq2SeqTask, BatchLayoutForEveryTask) {
  for (const auto task : {Seq2SeqTask::Copy, Seq2SeqTask::Reverse, Seq2SeqTask::Translate}) {
    auto ds = make_seq2seq_task(task, 2, 9, 20, 0.2);
    const PairTokens tok = *ds->pair_tokens();
    EXPECT_EQ(ds->vocab_size(), 23);
    EXPECT_EQ(tok.pad, 20);
    EXPECT_EQ(tok.bos, 21);
    EXPECT_EQ(tok.eos, 22);
    Generator gen(5);
    for (const bool validation : {false, true}) {
      const Batch batch = ds->sample(validation, 32, 10, gen);
      for (const TokenPair& pair : check_layout(batch, tok)) {
        EXPECT_GE(pair.source.size(), 2u);
        EXPECT_LE(pair.source.size(), 9u);
        EXPECT_EQ(pair.target, seq2seq_target(task, pair.source, 20));  // the task's rule
      }
    }
  }
}

TEST(Seq2SeqTask, SameGeneratorStateSameBatch) {
  auto ds = make_seq2seq_task(Seq2SeqTask::Translate, 1, 12, 16, 0.1);
  Generator a(7), c(8);
  a.next_u64();
  Generator b = a;  // the same state
  const Batch x = ds->sample(false, 8, 13, a), y = ds->sample(false, 8, 13, b), z = ds->sample(false, 8, 13, c);
  EXPECT_EQ(x.sources.to_ints(), y.sources.to_ints());
  EXPECT_EQ(x.inputs.to_ints(), y.inputs.to_ints());
  EXPECT_EQ(x.targets.to_ints(), y.targets.to_ints());
  EXPECT_EQ(x.source_padding.to_ints(), y.source_padding.to_ints());
  EXPECT_NE(x.sources.to_ints(), z.sources.to_ints());
  EXPECT_NE(ds->sample(false, 8, 13, a).sources.to_ints(), x.sources.to_ints());  // the stream moves on
}

TEST(Seq2SeqTask, TranslateRuleIsAFixedWordMapAndPairSwap) {
  const int64_t V = 32;
  std::vector<int32_t> m(V);  // the word map, read from one-word sources
  for (int32_t w = 0; w < V; ++w) m[w] = seq2seq_target(Seq2SeqTask::Translate, {w}, V).at(0);
  EXPECT_EQ(std::set<int32_t>(m.begin(), m.end()).size(), static_cast<size_t>(V)) << "the map is a permutation";
  int64_t fixed_points = 0;
  for (int32_t w = 0; w < V; ++w) fixed_points += m[w] == w;
  EXPECT_EQ(fixed_points, 0) << "no word translates to itself";
  const std::vector<int32_t> src = {3, 17, 0, 9, 31};
  EXPECT_EQ(seq2seq_target(Seq2SeqTask::Translate, src, V), (std::vector<int32_t>{m[17], m[3], m[9], m[0], m[31]}));
  EXPECT_EQ(seq2seq_target(Seq2SeqTask::Translate, {5, 6}, V), (std::vector<int32_t>{m[6], m[5]}));
  EXPECT_EQ(seq2seq_target(Seq2SeqTask::Reverse, src, V), (std::vector<int32_t>{31, 9, 0, 17, 3}));
  EXPECT_EQ(seq2seq_target(Seq2SeqTask::Copy, src, V), src);
  // Deterministic across datasets: two instances give the same validation pairs.
  auto a = make_seq2seq_task(Seq2SeqTask::Translate, 3, 8, V, 0.1);
  auto b = make_seq2seq_task(Seq2SeqTask::Translate, 3, 8, V, 0.1);
  const auto pa = a->validation_pairs(20), pb = b->validation_pairs(20);
  ASSERT_EQ(pa.size(), 20u);
  for (size_t i = 0; i < pa.size(); ++i) {
    EXPECT_EQ(pa[i].source, pb[i].source);
    EXPECT_EQ(pa[i].target, pb[i].target);
  }
  // A position-wise map (target_i = m(x_i)) is far from the reference: BLEU well below 50.
  std::vector<std::string> positionwise, references;
  for (const TokenPair& p : pa) {
    std::vector<int32_t> guess;
    for (const int32_t w : p.source) guess.push_back(m[w]);
    positionwise.push_back(render_ids(guess));
    references.push_back(render_ids(p.target));
  }
  EXPECT_LT(corpus_bleu(positionwise, references), 20.0);
  EXPECT_NEAR(corpus_bleu(references, references), 100.0, 1e-9);
}

// The set of sources in `batch` (rows decoded up to EOS).
std::set<std::vector<int32_t>> sources_of(const Batch& batch, const PairTokens& tok) {
  std::set<std::vector<int32_t>> out;
  for (const TokenPair& p : check_layout(batch, tok)) out.insert(p.source);
  return out;
}

TEST(Seq2SeqTask, TrainingAndValidationSourcesAreDisjoint) {
  // 4 words, lengths 2..3: only 80 distinct sources, so both splits are drawn many times over.
  auto ds = make_seq2seq_task(Seq2SeqTask::Reverse, 2, 3, 4, 0.25);
  const PairTokens tok = *ds->pair_tokens();
  Generator gen(1);
  std::set<std::vector<int32_t>> train, val;
  for (int rep = 0; rep < 20; ++rep) {
    for (const auto& s : sources_of(ds->sample(false, 32, 4, gen), tok)) train.insert(s);
    for (const auto& s : sources_of(ds->sample(true, 32, 4, gen), tok)) val.insert(s);
  }
  EXPECT_GT(train.size(), 40u);
  EXPECT_GT(val.size(), 5u);
  for (const auto& s : val) EXPECT_EQ(train.count(s), 0u) << "a validation source was drawn for training";
  const auto fixed = ds->validation_pairs(50);
  ASSERT_EQ(fixed.size(), 50u);
  for (const TokenPair& p : fixed) {
    EXPECT_EQ(train.count(p.source), 0u);
    EXPECT_EQ(p.target, seq2seq_target(Seq2SeqTask::Reverse, p.source, 4));
  }
  const auto first = ds->validation_pairs(10);  // the same pairs in the same order
  for (size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i].source, fixed[i].source);
  EXPECT_TRUE(ds->validation_pairs(0).empty());
}

TEST(Seq2SeqTask, ErrorsNameTheLimits) {
  auto ds = make_seq2seq_task(Seq2SeqTask::Copy, 2, 9, 20, 0.1);
  Generator gen(0);
  std::string msg = error_of([&] { ds->sample(false, 2, 9, gen); });
  EXPECT_NE(msg.find("[seq2seq_copy]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("need context >= 10, got 9"), std::string::npos) << msg;
  EXPECT_NO_THROW(ds->check_fits(10));
  EXPECT_THROW(ds->check_fits(9), Error);
  msg = error_of([&] { make_seq2seq_task(Seq2SeqTask::Copy, 5, 4, 20, 0.1); });
  EXPECT_NE(msg.find("seq2seq_min_length"), std::string::npos) << msg;
  msg = error_of([&] { make_seq2seq_task(Seq2SeqTask::Translate, 1, 4, (int64_t{1} << 24) + 1, 0.1); });
  EXPECT_NE(msg.find("the word map is a table"), std::string::npos) << msg;
  // Copy and reverse need no table: the largest vocabulary that leaves int32 ids for the specials.
  EXPECT_EQ(make_seq2seq_task(Seq2SeqTask::Copy, 1, 4, 2147483644, 0.1)->pair_tokens()->eos, 2147483646);
  EXPECT_THROW(make_seq2seq_task(Seq2SeqTask::Copy, 1, 4, 2147483645, 0.1), Error);
  auto no_val = make_seq2seq_task(Seq2SeqTask::Copy, 2, 4, 20, 0.0);
  msg = error_of([&] { no_val->sample(true, 1, 5, gen); });
  EXPECT_NE(msg.find("val_fraction is 0"), std::string::npos) << msg;
}

TEST(Seq2SeqTask, PairTextRendersWordsUpToEos) {
  auto ds = make_seq2seq_task(Seq2SeqTask::Copy, 1, 4, 20, 0.1);
  EXPECT_EQ(ds->tokenizer(), nullptr);
  EXPECT_EQ(render_ids({12, 0, 3}), "w12 w0 w3");
  EXPECT_EQ(pair_text(*ds, {21, 12, 0, 20, 3, 22, 5, 6}), "w12 w0 w3");  // BOS, PAD dropped; cut at EOS
  EXPECT_EQ(pair_text(*ds, {22, 1}), "");
}

TEST(Seq2SeqTask, MakeDatasetWiring) {
  DataConfig c;
  c.copy_vocab = 10;
  c.copy_length = 6;
  c.seq2seq_min_length = 3;
  for (const std::string source : {"seq2seq_copy", "seq2seq_reverse", "seq2seq_translate"}) {
    c.source = source;
    EXPECT_TRUE(is_seq2seq_source(source));
    auto ds = make_dataset(c);
    EXPECT_EQ(ds->vocab_size(), 13);
    ASSERT_NE(as_pair_dataset(*ds), nullptr);
    EXPECT_EQ(ds->pair_tokens()->pad, 10);
    EXPECT_EQ(ds->pair_tokens()->eos, 12);
    Generator gen(3);
    for (const TokenPair& p : check_layout(ds->sample(false, 16, 7, gen), *ds->pair_tokens())) {
      EXPECT_GE(p.source.size(), 3u);
      EXPECT_LE(p.source.size(), 6u);
    }
    EXPECT_THROW(make_dataset(c, /*masked_lm=*/true), Error);
    EXPECT_THROW(load_token_streams(c), Error);
  }
  c.source = "copy";
  EXPECT_FALSE(make_dataset(c)->pair_tokens().has_value());
  EXPECT_EQ(as_pair_dataset(*make_dataset(c)), nullptr);
  EXPECT_FALSE(is_seq2seq_source("copy"));
  EXPECT_FALSE(is_seq2seq_source("seq2seq_other.txt"));
}

}  // namespace
}  // namespace normlab
