// data.tokenizer = "sentencepiece" end to end on a small generated Spanish-English pairs file: the
// run keeps its model (sentencepiece.model, named with its size and CRC-32 by tokenizer.json and
// readable by spm_encode), resume and `normlab sample` use that model (a swapped one is an error
// naming the file), and sample decodes detokenized text.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "command_util.h"
#include "config/config.h"
#include "core/files.h"
#include "data/sentencepiece.h"
#include "train/trainer.h"
#include "test_util.h"
#include "trainer_test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using test::quiet_options;
using test::ScratchDir;

// `n` lines "spanish<TAB>english" of 2-6 words from a fixed word map, seeded.
std::vector<std::pair<std::string, std::string>> generated_pairs(int n, uint32_t seed) {
  const char* const words[][2] = {{"el", "the"},       {"hombre", "man"},    {"mujer", "woman"}, {"niño", "child"},
                                  {"casa", "house"},   {"dijo", "said"},     {"está", "is"},     {"aquí", "here"},
                                  {"corazón", "heart"}, {"pueblo", "people"}, {"agua", "water"},  {"año", "year"}};
  std::vector<std::pair<std::string, std::string>> pairs;
  for (int i = 0; i < n; ++i) {
    auto next = [&] { return (seed = seed * 1664525u + 1013904223u) >> 8; };
    std::string es = "¿Quién", en = "Who";
    for (int w = 0, count = 2 + static_cast<int>(next() % 5); w < count; ++w) {
      const auto& pair = words[next() % 12];
      es += std::string(" ") + pair[0];
      en += std::string(" ") + pair[1];
    }
    pairs.emplace_back(es + "?", en + "?");
  }
  return pairs;
}

RunConfig spm_run(const ScratchDir& dir, const std::string& pairs_path) {
  return load_config(std::string(NORMLAB_SOURCE_DIR) + "/experiments/configs/seq2seq_translate.toml",
                     {"model.d_model=16", "model.n_heads=2", "model.n_layers=1", "model.d_ff=32",
                      "model.context_length=40", "train.context=40", "train.batch_size=8", "train.steps=6",
                      "train.threads=1", "log.every=1", "log.eval_every=3", "log.eval_batches=1",
                      "log.grad_norm_every=3", "log.bleu_pairs=0", "data.source=pairs:" + pairs_path,
                      "data.tokenizer=sentencepiece", "data.sentencepiece_vocab=100", "data.val_fraction=0.1",
                      "train.name=spm", "train.out_dir=" + dir.file("runs")});
}

std::string write_pairs(const ScratchDir& dir, const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string text;
  for (const auto& [es, en] : pairs) text += es + "\t" + en + "\n";
  return dir.write("pairs.tsv", text);
}

TEST(SentencePieceRun, KeepsItsModelAndResumesAndSamplesWithIt) {
  ScratchDir dir;
  const auto pairs = generated_pairs(300, 11);
  const RunConfig c = spm_run(dir, write_pairs(dir, pairs));
  const fs::path run = dir.path() / "runs" / "spm";
  testing::internal::CaptureStderr();
  EXPECT_EQ(train(c, quiet_options(3)).status, RunStatus::Stopped);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << "SentencePiece's training log reached stderr";

  // tokenizer.json names the model file, its size and CRC-32.
  const std::string model = read_whole_file(run / kSentencePieceFile, "test");
  const nlohmann::json json = nlohmann::json::parse(read_whole_file(run / "tokenizer.json", "test"));
  EXPECT_EQ(json["kind"], "sentencepiece");
  EXPECT_EQ(json["file"], "sentencepiece.model");
  EXPECT_EQ(json["bytes"].get<size_t>(), model.size());
  EXPECT_EQ(json["vocab_size"], 100);
  const auto tokenizer = load_tokenizer(json.dump(), run);

  // Resume loads the saved model: a swapped one stops it, naming the file; the right one finishes it.
  const std::string path = (run / kSentencePieceFile).string();
  std::vector<std::string> other_lines;  // a model of the same size from other lines
  for (const auto& [es, en] : generated_pairs(300, 99)) other_lines.insert(other_lines.end(), {es, en});
  SentencePieceOptions options;
  options.vocab_size = 100;
  std::ofstream(path, std::ios::binary) << train_sentencepiece(other_lines, options)->files()[0].bytes;
  const std::string message = test::error_of([&] { train(RunConfig{}, quiet_options(-1, run.string())); });
  EXPECT_NE(message.find(path + " does not match"), std::string::npos) << message;
  const auto sample_swapped = test::run_command(test::kNormlab + " sample " + run.string() + " --source 'el hombre'");
  EXPECT_EQ(sample_swapped.exit_code, 1) << sample_swapped.output;
  EXPECT_NE(sample_swapped.output.find(path), std::string::npos) << sample_swapped.output;
  std::ofstream(path, std::ios::binary) << model;
  EXPECT_EQ(train(RunConfig{}, quiet_options(-1, run.string())).status, RunStatus::Completed);
  EXPECT_EQ(read_whole_file(run / kSentencePieceFile, "test"), model);

  // sample decodes: the references of the validation lines come back as their text (detokenized).
  const auto bleu = test::run_command(test::kNormlab + " sample " + run.string() + " --bleu 2 --beam 1");
  ASSERT_EQ(bleu.exit_code, 0) << bleu.output;
  EXPECT_NE(bleu.output.find("S\t" + pairs[270].first + "\nR\t" + pairs[270].second + "\nH\t"), std::string::npos)
      << bleu.output;
  const auto translated =
      test::run_command(test::kNormlab + " sample " + run.string() + " --source '¿Quién está aquí?'");
  EXPECT_EQ(translated.exit_code, 0) << translated.output;

  // spm_encode (Debian's sentencepiece package), when installed, reads the model with the same ids.
  if (test::run_command("command -v spm_encode").exit_code == 0) {
    const auto ids = test::run_command("printf '%s\\n' '" + pairs[3].first + "' | spm_encode --model=" + path +
                                       " --output_format=id");
    std::string expected;
    for (const int32_t id : tokenizer->encode(pairs[3].first)) {
      if (!expected.empty()) expected += ' ';
      expected += std::to_string(id);
    }
    EXPECT_EQ(ids.output, expected + "\n");
  }
}

}  // namespace
}  // namespace normlab
