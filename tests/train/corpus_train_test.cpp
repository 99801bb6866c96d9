// Translation corpora end to end (data.source = "corpus:DIR", train.max_tokens, train.epochs):
// a made-up corpus where target word i translates source word i trains by epochs of token
// batches, evaluates and keeps its best epoch, resumes bit for bit, decodes greedily in batches
// as one source at a time does, and scores its test split against both references.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "command_util.h"
#include "config/config.h"
#include "core/files.h"
#include "core/random.h"
#include "data/translation_corpus.h"
#include "nn/transformer.h"
#include "train/checkpoint.h"
#include "train/epoch_batches.h"
#include "train/trainer.h"
#include "train/trainer_files.h"
#include "train/translate.h"
#include "test_util.h"
#include "made_up_corpus.h"
#include "trainer_test_util.h"

namespace normlab {
namespace {

using test::metrics_without_timing;
using test::quiet_options;
using test::ScratchDir;
using test::error_of;
using test::write_made_up_corpus;

RunConfig corpus_config(const ScratchDir& dir, const std::vector<std::string>& more = {}) {
  std::vector<std::string> o = {"model.d_model=32", "model.n_heads=2", "model.n_layers=1", "model.d_ff=64",
                                "model.context_length=24", "train.context=24", "data.source=corpus:" +
                                write_made_up_corpus(dir), "data.tokenizer=sentencepiece",
                                "data.sentencepiece_vocab=18", "train.max_tokens=64", "train.epochs=4",
                                "train.threads=1", "optim.lr=3e-3", "log.every=1", "log.eval_every=0",
                                "log.grad_norm_every=100", "log.val_bleu=true", "log.bleu_pairs=0",
                                "train.out_dir=" + dir.file("runs")};
  o.insert(o.end(), more.begin(), more.end());
  return load_config(std::string(NORMLAB_SOURCE_DIR) + "/experiments/configs/seq2seq_translate.toml", o);
}

// Every training pair is in exactly one batch of an epoch, and each epoch has its own order.
TEST(CorpusTraining, AnEpochVisitsEveryTrainingPairOnce) {
  ScratchDir dir;
  RunConfig c = corpus_config(dir);
  const auto data = make_dataset(c.data);
  const PairDataset& pairs = *as_pair_dataset(*data);
  const EpochBatches epochs(pairs, c);
  const int64_t n = epochs.batches_per_epoch();
  std::multiset<std::vector<double>> seen, expected;
  for (const TokenPair& p : pairs.training_pairs()) {
    std::vector<double> row(p.source.begin(), p.source.end());
    row.push_back(pairs.pair_tokens()->eos);
    expected.insert(row);
  }
  std::vector<std::vector<double>> first_rows;
  for (int64_t step = 0; step < n; ++step) {
    const Batch b = epochs.training_batch(step);
    const std::vector<double> s = b.sources.to_vector();
    const int64_t width = b.sources.size(1);
    for (int64_t r = 0; r < b.sources.size(0); ++r) {
      std::vector<double> row(s.begin() + r * width, s.begin() + (r + 1) * width);
      while (row.back() == pairs.pair_tokens()->pad) row.pop_back();
      seen.insert(row);
    }
    first_rows.push_back({s.begin(), s.begin() + width});
  }
  EXPECT_EQ(seen, expected);
  std::vector<std::vector<double>> second_epoch;
  for (int64_t step = n; step < 2 * n; ++step) {
    const std::vector<double> s = epochs.training_batch(step).sources.to_vector();
    second_epoch.push_back({s.begin(), s.begin() + epochs.training_batch(step).sources.size(1)});
  }
  EXPECT_NE(first_rows, second_epoch);
  EXPECT_EQ(epochs.epoch_of_update(n), 1);
  EXPECT_EQ(epochs.epoch_of_update(n + 1), 2);
}

TEST(CorpusTraining, TrainsByEpochsKeepsTheBestAndResumesExactly) {
  ScratchDir dir;
  const RunConfig c = corpus_config(dir, {"train.name=full"});
  const TrainResult full = train(c, quiet_options());
  ASSERT_EQ(full.status, RunStatus::Completed) << full.reason;
  const auto run_dir = dir.path() / "runs" / "full";
  const auto metrics = metrics_without_timing(run_dir);
  // One validation row per epoch, numbered, with the validation BLEU and chrF.
  std::vector<nlohmann::json> epochs;
  for (const auto& row : metrics)
    if (row.contains("val_loss")) epochs.push_back(row);
  ASSERT_EQ(epochs.size(), 4u);
  const int64_t per_epoch = epochs[0]["step"].get<int64_t>();
  EXPECT_EQ(full.steps_done, 4 * per_epoch);
  double best = INFINITY;
  int64_t best_epoch = 0;
  for (size_t e = 0; e < epochs.size(); ++e) {
    EXPECT_EQ(epochs[e]["epoch"].get<int64_t>(), static_cast<int64_t>(e) + 1);
    EXPECT_EQ(epochs[e]["step"].get<int64_t>(), static_cast<int64_t>(e + 1) * per_epoch);
    ASSERT_TRUE(epochs[e].contains("val_bleu"));
    EXPECT_GE(epochs[e]["val_chrf"].get<double>(), 0.0);
    if (epochs[e]["val_loss"].get<double>() < best) best = epochs[e]["val_loss"], best_epoch = static_cast<int64_t>(e) + 1;
  }
  EXPECT_LT(epochs.back()["val_loss"].get<double>(), epochs.front()["val_loss"].get<double>());
  // best.json names the epoch of the lowest validation loss, and best/ holds its weights.
  const nlohmann::json best_json = nlohmann::json::parse(read_whole_file(run_dir / "best.json", "test"));
  EXPECT_EQ(best_json["epoch"].get<int64_t>(), best_epoch);
  EXPECT_EQ(best_json["val_loss"].get<double>(), best);
  EXPECT_TRUE(has_checkpoint((run_dir / "best").string()));

  // Stopped in the middle of epoch 2, then resumed: the same metrics as the uninterrupted run.
  const RunConfig part = corpus_config(dir, {"train.name=part"});
  EXPECT_EQ(train(part, quiet_options(per_epoch + per_epoch / 2)).status, RunStatus::Stopped);
  const TrainResult resumed = train(RunConfig{}, quiet_options(-1, (dir.path() / "runs" / "part").string()));
  EXPECT_EQ(resumed.status, RunStatus::Completed);
  const auto m_part = metrics_without_timing(dir.path() / "runs" / "part");
  ASSERT_EQ(m_part.size(), metrics.size());
  for (size_t i = 0; i < metrics.size(); ++i) EXPECT_EQ(m_part[i], metrics[i]) << "record " << i;
}

// log.test_beam: a completed epoch run decodes the test split from RUN/best and from its last
// weights by beam search; its summary's BLEU and chrF and RUN/test_hypotheses*.txt are what
// score_split gives for those weights.
TEST(CorpusTraining, ACompletedRunScoresTheTestSplitFromItsBestCheckpoint) {
  ScratchDir dir;
  const RunConfig c = corpus_config(dir, {"train.name=scored", "train.epochs=2", "log.test_beam=2",
                                          "log.test_length_penalty=0.8"});
  ASSERT_EQ(train(c, quiet_options()).status, RunStatus::Completed);
  const auto run_dir = dir.path() / "runs" / "scored";
  RunConfig rc = load_config((run_dir / "config.toml").string(), {});
  rc.data.saved_tokenizer_dir = run_dir.string();
  const auto data = make_dataset(rc.data);
  rc.model.vocab_size = data->vocab_size();
  TransformerLM model(rc.model);
  load_model_weights((run_dir / "best").string(), model);
  const SplitScore want = score_split(model, *as_pair_dataset(*data), EvalSplit::Test, INT64_MAX, {2, 0, 0.8});
  const nlohmann::json summary = test::read_summary(run_dir);
  EXPECT_EQ(summary["test_checkpoint"], "best");
  EXPECT_DOUBLE_EQ(summary["test_bleu"].get<double>(), want.bleu.score);
  EXPECT_DOUBLE_EQ(summary["test_chrf"].get<double>(), want.chrf.score);
  EXPECT_EQ(summary["test_bleu_signature"], want.bleu.signature);
  std::string lines;
  for (const std::string& h : want.hypotheses) lines += h + "\n";
  EXPECT_EQ(read_whole_file(run_dir / "test_hypotheses.txt", "test"), lines);
  // The last weights (RUN/checkpoint/) are scored too, for the audit of best against last.
  load_model_weights(run_dir.string(), model);
  const SplitScore last = score_split(model, *as_pair_dataset(*data), EvalSplit::Test, INT64_MAX, {2, 0, 0.8});
  EXPECT_DOUBLE_EQ(summary["test_bleu_last"].get<double>(), last.bleu.score);
  EXPECT_DOUBLE_EQ(summary["test_chrf_last"].get<double>(), last.chrf.score);
  std::string last_lines;
  for (const std::string& h : last.hypotheses) last_lines += h + "\n";
  EXPECT_EQ(read_whole_file(run_dir / "test_hypotheses_last.txt", "test"), last_lines);
  // When the last weights are not the best (here: untrained weights stand in for them, the run
  // having ended after its best step), each score is its own checkpoint's.
  RunConfig untrained_config = rc;
  untrained_config.model.seed = rc.model.seed + 1;
  TransformerLM untrained(untrained_config.model);
  const SplitScore untrained_score =
      score_split(untrained, *as_pair_dataset(*data), EvalSplit::Test, INT64_MAX, {2, 0, 0.8});
  TrainResult later;
  later.steps_done = summary["steps_done"].get<int64_t>() + 1;
  training::score_test_split(rc, *as_pair_dataset(*data), untrained, run_dir, later);
  EXPECT_EQ(later.test_checkpoint, "best");
  EXPECT_DOUBLE_EQ(later.test_bleu, want.bleu.score);
  EXPECT_DOUBLE_EQ(later.test_bleu_last, untrained_score.bleu.score);
  EXPECT_NE(later.test_bleu, later.test_bleu_last);
  EXPECT_EQ(read_whole_file(run_dir / "test_hypotheses.txt", "test"), lines);
  // Without train.epochs there is no best checkpoint to score: refused before training.
  EXPECT_THROW(train(corpus_config(dir, {"train.name=no_epochs", "train.epochs=0", "train.steps=3", "log.test_beam=2"}),
                     quiet_options()), Error);
}

// `normlab baseline CONFIG --hypotheses DIR` on a corpus writes each baseline's translations of
// each split, one line per pair, whose BLEU is the one it prints.
TEST(CorpusTraining, BaselineWritesEachBaselinesTranslations) {
  ScratchDir dir;
  const std::string corpus = write_made_up_corpus(dir);
  const auto out = test::run_command(test::kNormlab + " baseline " + NORMLAB_SOURCE_DIR +
                                     "/experiments/configs/seq2seq_translate.toml data.source=corpus:" + corpus +
                                     " --hypotheses " + dir.file("hyps"));
  ASSERT_EQ(out.exit_code, 0) << out.output;
  const TranslationCorpus pairs = load_translation_corpus(corpus);
  for (const auto& [split, rows] : {std::pair{"valid", &pairs.valid}, std::pair{"test", &pairs.test}}) {
    std::vector<std::vector<std::string>> refs(2);
    for (const CorpusPair& p : *rows) {
      refs[0].push_back(p.target);
      refs[1].push_back(p.second);
    }
    for (const char* name : {"copy", "most_frequent", "dice"}) {
      const std::string text = read_whole_file(dir.path() / "hyps" / (std::string(split) + "_" + name + ".txt"), "test");
      std::vector<std::string> lines;
      for (size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
        lines.push_back(text.substr(start, end - start));
      ASSERT_EQ(lines.size(), rows->size()) << split << " " << name;
      EXPECT_NE(out.output.find(corpus_bleu_score(lines, refs).format()), std::string::npos) << split << " " << name;
    }
  }
}

// A finished run of 2 epochs extended by `--resume DIR train.epochs=3` equals a 3-epoch run (a
// schedule that does not depend on the run's length); train.steps=N is refused for it, naming the unit.
TEST(CorpusTraining, AnEpochRunExtendsByEpochsAsIfItHadBeenLongerFromTheStart) {
  ScratchDir dir;
  const auto config = [&](const std::string& name, int epochs) {
    return corpus_config(dir, {"train.name=" + name, "train.epochs=" + std::to_string(epochs),
                               "schedule.kind=inverse_sqrt", "schedule.warmup_steps=4"});
  };
  ASSERT_EQ(train(config("three", 3), quiet_options()).status, RunStatus::Completed);
  ASSERT_EQ(train(config("two", 2), quiet_options()).status, RunStatus::Completed);
  const auto two = dir.path() / "runs" / "two";
  TrainOptions by_steps = quiet_options(-1, two.string());
  by_steps.extend_to_steps = 1000;
  const std::string refused = error_of([&] { train(RunConfig{}, by_steps); });
  EXPECT_NE(refused.find("counts epochs (train.epochs = 2): extend it with train.epochs=N"), std::string::npos)
      << refused;
  TrainOptions by_epochs = quiet_options(-1, two.string());
  by_epochs.extend_to_epochs = 3;
  const TrainResult extended = train(RunConfig{}, by_epochs);
  ASSERT_EQ(extended.status, RunStatus::Completed) << extended.reason;
  const auto full = metrics_without_timing(dir.path() / "runs" / "three");
  const auto m_extended = metrics_without_timing(two);
  ASSERT_EQ(m_extended.size(), full.size());
  for (size_t i = 0; i < full.size(); ++i) EXPECT_EQ(m_extended[i], full[i]) << "record " << i;
  EXPECT_EQ(load_config((two / "config.toml").string(), {}).train.epochs, 3);
}

TEST(CorpusTraining, BatchedGreedyDecodingIsOneSourceAtATimeAndTestScoresBothReferences) {
  ScratchDir dir;
  const RunConfig c = corpus_config(dir, {"train.name=decode", "model.dtype=float64", "train.epochs=3"});
  ASSERT_EQ(train(c, quiet_options()).status, RunStatus::Completed);
  const auto run_dir = dir.path() / "runs" / "decode";
  RunConfig rc = load_config((run_dir / "config.toml").string(), {});
  rc.data.saved_tokenizer_dir = run_dir.string();
  const auto data = make_dataset(rc.data);
  const PairDataset& pairs = *as_pair_dataset(*data);
  rc.model.vocab_size = data->vocab_size();
  TransformerLM model(rc.model);
  load_model_weights(run_dir.string(), model);
  std::vector<std::vector<int32_t>> sources;
  for (const TokenPair& p : pairs.eval_pairs(EvalSplit::Test, 100)) sources.push_back(p.source);
  ASSERT_EQ(sources.size(), 24u);
  // Batches of at most 20 padded source tokens: several batches of several rows.
  const auto batched = translate_greedy(model, sources, *pairs.pair_tokens(), 0, 20);
  for (size_t i = 0; i < sources.size(); ++i)
    EXPECT_EQ(batched[i], translate(model, sources[i], *pairs.pair_tokens(), {1, 0, 1.0})) << "source " << i;
  // The test split against two references: the signature says so, and the score equals BLEU
  // computed from the printed hypotheses.
  const SplitScore score = score_split(model, pairs, EvalSplit::Test, INT64_MAX, {1, 0, 1.0});
  ASSERT_EQ(score.references.size(), 2u);
  EXPECT_EQ(score.references[1][0].back(), 'x');
  EXPECT_NE(score.bleu.signature.find("nrefs:2"), std::string::npos);
  EXPECT_EQ(score.bleu.score, corpus_bleu_score(score.hypotheses, score.references).score);
  const auto out = test::run_command(test::kNormlab + " sample " + run_dir.string() +
                                     " --split test --beam 3 --length-penalty 1.2 --checkpoint best");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("24 pairs of the test split, beam 3, length penalty 1.2"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("BLEU "), std::string::npos);
  EXPECT_NE(out.output.find("chrF2 "), std::string::npos);
}

}  // namespace
}  // namespace normlab
