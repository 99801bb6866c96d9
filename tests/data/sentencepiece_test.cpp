// data.tokenizer = "sentencepiece" (data/sentencepiece.h): round trips of training and unseen text,
// deterministic and quiet training, the vocabulary size, a pairs file's tokenizer trained on its
// training lines only, the saved model loaded back, and every bad model file named.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "core/digest.h"
#include "core/files.h"
#include "data/sentencepiece.h"
#include "data/seq2seq.h"
#include "data_test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using test::error_of;

// Spanish-English word pairs; sentences are seeded word strings with a capital, a comma and a
// final stop, or "¿Quién ...?" questions.
const char* const kWords[][2] = {
    {"el", "the"},      {"hombre", "man"},     {"mujer", "woman"},   {"niño", "child"},   {"casa", "house"},
    {"dijo", "said"},   {"señor", "lord"},     {"está", "is"},       {"aquí", "here"},    {"corazón", "heart"},
    {"pueblo", "people"}, {"agua", "water"},   {"año", "year"},      {"vió", "saw"},      {"grande", "great"},
    {"después", "after"}, {"también", "also"}};
constexpr int kNumWords = sizeof(kWords) / sizeof(kWords[0]);

std::string capitalized(std::string word) {
  if (!word.empty() && word[0] >= 'a' && word[0] <= 'z') word[0] = static_cast<char>(word[0] - 'a' + 'A');
  return word;
}

// `n` pairs "spanish<TAB>english", the same for the same n and seed.
std::vector<std::pair<std::string, std::string>> generated_pairs(int n, uint32_t seed = 7) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (int i = 0; i < n; ++i) {
    auto next = [&] { return (seed = seed * 1664525u + 1013904223u) >> 8; };
    const bool question = next() % 4 == 0;
    std::string es = question ? "¿Quién" : "", en = question ? "Who" : "";
    const int words = 3 + static_cast<int>(next() % 6);
    for (int w = 0; w < words; ++w) {
      const auto& pair = kWords[next() % kNumWords];
      const bool first = w == 0 && !question;
      es += std::string(es.empty() ? "" : (w == 2 ? ", " : " ")) + (first ? capitalized(pair[0]) : pair[0]);
      en += std::string(en.empty() ? "" : (w == 2 ? ", " : " ")) + (first ? capitalized(pair[1]) : pair[1]);
    }
    pairs.emplace_back(es + (question ? "?" : "."), en + (question ? "?" : "."));
  }
  return pairs;
}

std::vector<std::string> both_sides(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::vector<std::string> lines;
  for (const auto& [es, en] : pairs) {
    lines.push_back(es);
    lines.push_back(en);
  }
  return lines;
}

SentencePieceOptions options(int64_t vocab, const std::string& type = "bpe") {
  SentencePieceOptions o;
  o.vocab_size = vocab;
  o.model_type = type;
  return o;
}

// A temporary directory, removed with what is in it.
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("normlab_spm_test_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

// Writes the tokenizer as a run directory holds it; returns tokenizer.json's text.
std::string save(const Tokenizer& tok, const fs::path& dir) {
  for (const TokenizerFile& f : tok.files()) std::ofstream(dir / f.name, std::ios::binary) << f.bytes;
  std::ofstream(dir / "tokenizer.json") << tok.to_json();
  return tok.to_json();
}

TEST(SentencePiece, RoundTripsTrainingAndUnseenTextWithoutUnknowns) {
  const auto lines = both_sides(generated_pairs(300));
  for (const char* type : {"bpe", "unigram"}) {
    SCOPED_TRACE(type);
    const auto tok = train_sentencepiece(lines, options(120, type));
    EXPECT_EQ(tok->kind(), "sentencepiece");
    for (const std::string& line : lines) {
      const std::vector<int32_t> ids = tok->encode(line);
      EXPECT_EQ(std::count(ids.begin(), ids.end(), 0), 0) << "<unk> in a training line: " << line;
      EXPECT_LT(ids.size(), line.size()) << "subwords, not characters: " << line;
      ASSERT_EQ(tok->decode(ids), line);  // detokenized: spaces where they were, none added
    }
    for (const std::string unseen : {"¿Quién está aquí?", "Después, el niño vió el agua grande también.",
                                     "The great lord said, here is the child."}) {
      const std::vector<int32_t> ids = tok->encode(unseen);
      EXPECT_EQ(std::count(ids.begin(), ids.end(), 0), 0) << unseen;
      EXPECT_EQ(tok->decode(ids), unseen);
    }
    // A character the training text lacks is <unk> (id 0), no byte fallback.
    EXPECT_EQ(tok->encode("ж").back(), 0);
  }
}

TEST(SentencePiece, TrainingIsDeterministicAndQuiet) {
  const auto lines = both_sides(generated_pairs(300));
  for (const char* type : {"bpe", "unigram"}) {
    SCOPED_TRACE(type);
    testing::internal::CaptureStderr();
    const auto a = train_sentencepiece(lines, options(120, type));
    const std::string logged = testing::internal::GetCapturedStderr();
    EXPECT_EQ(logged, "") << "SentencePiece's log lines reach stderr";
    const auto b = train_sentencepiece(lines, options(120, type));
    ASSERT_EQ(a->files().size(), 1u);
    EXPECT_EQ(a->files()[0].name, "sentencepiece.model");
    EXPECT_EQ(a->files()[0].bytes, b->files()[0].bytes);
    EXPECT_EQ(a->to_json(), b->to_json());
    EXPECT_EQ(a->encode(lines[5]), b->encode(lines[5]));
  }
}

TEST(SentencePiece, HonorsTheVocabularySize) {
  const auto lines = both_sides(generated_pairs(300));
  for (const int64_t vocab : {60, 100, 180}) {
    const auto tok = train_sentencepiece(lines, options(vocab));
    EXPECT_EQ(tok->vocab_size(), vocab);
    int32_t largest = 0;
    for (const std::string& line : lines)
      for (const int32_t id : tok->encode(line)) largest = std::max(largest, id);
    EXPECT_EQ(largest, vocab - 1) << "every piece is used by some training line";
  }
  const std::string too_big = error_of([&] { train_sentencepiece(lines, options(5000)); });
  EXPECT_NE(too_big.find("[tokenizer] sentencepiece training failed"), std::string::npos) << too_big;
  EXPECT_NE(too_big.find("data.sentencepiece_vocab = 5000"), std::string::npos) << too_big;
  EXPECT_NE(error_of([&] { train_sentencepiece(lines, options(100, "wordpiece")); }).find("bpe or unigram"),
            std::string::npos);
  EXPECT_NE(error_of([] { train_sentencepiece({"", ""}, options(100)); }).find("needs training text"),
            std::string::npos);
  EXPECT_NE(error_of([] { make_tokenizer("sentencepiece", "abc"); }).find("pairs:PATH"), std::string::npos);
}

// The last 30 of 300 lines are validation; each says "quetzal" three times a side. Trained on the
// training lines only, "quetzal" is several pieces while frequent training words of its length are
// one; trained on every line (val_fraction 0, the control), "quetzal" is one piece too.
TEST(SentencePiece, APairsFileTrainsOnItsTrainingLinesOnly) {
  std::string text;
  const auto pairs = generated_pairs(300);
  for (size_t i = 0; i < pairs.size(); ++i) {
    const std::string extra = i >= 270 ? " quetzal quetzal quetzal" : "";
    text += pairs[i].first + extra + "\t" + pairs[i].second + extra + "\n";
  }
  DataConfig config;
  config.tokenizer = "sentencepiece";
  config.sentencepiece_vocab = 150;
  config.val_fraction = 0.1;
  const auto ds = make_pairs_dataset_from_text(text, "pairs.tsv", config);
  EXPECT_EQ(ds->tokenizer()->vocab_size(), 150);
  EXPECT_EQ(ds->vocab_size(), 153);  // PAD, BOS, EOS after the pieces
  EXPECT_GT(ds->tokenizer()->encode("quetzal").size(), 1u);
  EXPECT_EQ(ds->tokenizer()->encode("corazón").size(), 1u);
  EXPECT_EQ(ds->tokenizer()->encode("también").size(), 1u);
  // The validation pairs decode to their lines (detokenized).
  const auto val = ds->validation_pairs(1);
  ASSERT_EQ(val.size(), 1u);
  EXPECT_EQ(pair_text(*ds, val[0].target), pairs[270].second + " quetzal quetzal quetzal");
  config.val_fraction = 0.0;
  const auto control = make_pairs_dataset_from_text(text, "pairs.tsv", config);
  EXPECT_EQ(control->tokenizer()->encode("quetzal").size(), 1u) << "the test would not see training on validation";
}

TEST(SentencePiece, SavedAndLoadedGivesTheSameIds) {
  TempDir dir;
  const auto lines = both_sides(generated_pairs(300));
  const auto tok = train_sentencepiece(lines, options(120, "unigram"));
  const std::string json = save(*tok, dir.path);
  EXPECT_NE(json.find("\"kind\": \"sentencepiece\", \"file\": \"sentencepiece.model\", \"bytes\": "),
            std::string::npos) << json;
  EXPECT_NE(json.find("\"vocab_size\": 120, \"model_type\": \"unigram\""), std::string::npos) << json;
  const auto loaded = load_tokenizer(json, dir.path);
  EXPECT_EQ(loaded->vocab_size(), 120);
  EXPECT_EQ(loaded->to_json(), json);
  for (const std::string& line : lines) ASSERT_EQ(loaded->encode(line), tok->encode(line));
  EXPECT_EQ(loaded->decode(tok->encode(lines[3])), lines[3]);
  EXPECT_NE(error_of([&] { loaded->decode({120}); }).find("outside the vocabulary [0, 120)"), std::string::npos);
  // A dataset given the run directory takes the saved model, whatever lines it is given.
  DataConfig config;
  config.tokenizer = "sentencepiece";
  config.sentencepiece_vocab = 120;
  config.saved_tokenizer_dir = dir.path.string();
  const auto from_run = sentencepiece_for_dataset(config, {"other text entirely"});
  EXPECT_EQ(from_run->to_json(), json);
  config.sentencepiece_vocab = 130;
  EXPECT_NE(error_of([&] { sentencepiece_for_dataset(config, {}); }).find("holds a vocabulary of 120"),
            std::string::npos);
}

TEST(SentencePiece, AMissingTruncatedSwappedOrCorruptModelIsAnErrorNamingTheFile) {
  TempDir dir;
  const auto lines = both_sides(generated_pairs(300));
  const auto tok = train_sentencepiece(lines, options(120));
  const std::string json = save(*tok, dir.path);
  const std::string model_path = (dir.path / "sentencepiece.model").string();
  const std::string model = tok->files()[0].bytes;
  auto load_error = [&](const std::string& text) { return error_of([&] { load_tokenizer(text, dir.path); }); };

  fs::remove(model_path);
  std::string message = load_error(json);
  EXPECT_NE(message.find("[tokenizer] " + model_path + ": cannot open file"), std::string::npos) << message;

  std::ofstream(model_path, std::ios::binary) << model.substr(0, model.size() / 2);
  message = load_error(json);
  EXPECT_NE(message.find(model_path + " does not match"), std::string::npos) << message;

  // Swapped: another model of the same size and type (trained on other lines).
  const auto other = train_sentencepiece(both_sides(generated_pairs(300, 99)), options(120));
  ASSERT_NE(other->files()[0].bytes, model);
  std::ofstream(model_path, std::ios::binary) << other->files()[0].bytes;
  message = load_error(json);
  EXPECT_NE(message.find(model_path + " does not match"), std::string::npos) << message;
  EXPECT_NE(message.find("replaced or damaged"), std::string::npos) << message;

  // Corrupt, with a tokenizer.json whose size and CRC-32 match it: SentencePiece's refusal (or a
  // piece count that differs), never a crash.
  auto json_for = [&](const std::string& bytes) {
    const FileDigest d = digest_of(bytes);
    const size_t at = json.find("\"bytes\": "), end = json.find(", \"vocab_size\"");
    return json.substr(0, at) + fmt::format("\"bytes\": {}, \"crc32\": \"{}\"", d.bytes, crc32_hex(d.crc32)) +
           json.substr(end);
  };
  ASSERT_EQ(json_for(model), json);
  for (size_t cut = 0; cut < model.size(); cut += 1 + model.size() / 40) {
    for (const std::string& bytes : {model.substr(0, cut), model.substr(0, cut) + "\xff\x01garbage"}) {
      std::ofstream(model_path, std::ios::binary) << bytes;
      message = load_error(json_for(bytes));
      EXPECT_NE(message.find(model_path), std::string::npos) << "cut " << cut << ": " << message;
    }
  }

  // tokenizer.json's own mistakes.
  EXPECT_NE(error_of([&] { load_tokenizer(json); }).find("needs the run directory"), std::string::npos);
  std::string escaping = json;
  escaping.replace(escaping.find("sentencepiece.model"), 19, "../x.model");
  EXPECT_NE(load_error(escaping).find("\"file\" must name a file in the run directory"), std::string::npos);
  EXPECT_NE(load_error("{\"kind\": \"sentencepiece\"}").find("no \"file\" string"), std::string::npos);
}

}  // namespace
}  // namespace normlab
