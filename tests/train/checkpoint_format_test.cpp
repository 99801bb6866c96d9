// The checkpoint layout (one generation named by a link, a manifest of sizes and CRC-32s), its
// strict parsers, the cleanup of what interrupted writers leave, and loads that change nothing
// unless the whole checkpoint is valid.
#include <gtest/gtest.h>

#include <filesystem>

#include "checkpoint_test_util.h"
#include "command_util.h"
#include "train/checkpoint.h"
#include "train/checkpoint_format.h"
#include "config/config.h"
#include "train/trainer.h"
#include "nn/transformer.h"
#include "optim/optimizer.h"
#include "test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using test::error_of;

const std::string kManifest =
    R"({"format": "normlab checkpoint", "version": 1, "step": 12, "files": {
        "model.safetensors": {"bytes": 10, "crc32": "0000abcd"},
        "optimizer.safetensors": {"bytes": 20, "crc32": "ffffffff"},
        "trainer_state.json": {"bytes": 30, "crc32": "12345678"}}})";

TEST(CheckpointFormat, ManifestRoundTrips) {
  const CheckpointManifest m = parse_manifest(kManifest, "m.json");
  EXPECT_EQ(m.step, 12);
  EXPECT_EQ(m.files.at("model.safetensors").crc32, 0xabcdu);
  EXPECT_EQ(m.files.at("optimizer.safetensors").crc32, 0xffffffffu);
  EXPECT_EQ(m.files.at("trainer_state.json").bytes, 30u);
  const CheckpointManifest again = parse_manifest(manifest_to_json(m), "again.json");
  EXPECT_EQ(again.step, m.step);
  for (const auto& [name, digest] : m.files) {
    EXPECT_EQ(again.files.at(name).bytes, digest.bytes) << name;
    EXPECT_EQ(again.files.at(name).crc32, digest.crc32) << name;
  }
}

TEST(CheckpointFormat, AMalformedManifestIsAnErrorNamingTheFileAndWhat) {
  auto changed = [](const std::string& from, const std::string& to) {
    std::string text = kManifest;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{", "not valid JSON"},
      {"[]", "not a JSON object"},
      {changed("\"version\": 1", "\"version\": 2"), "version 2"},
      {changed("\"step\": 12", "\"step\": -1"), "\"step\""},
      {changed("\"step\": 12", "\"step\": 1.5"), "\"step\""},
      {changed("0000abcd", "0000ABCD"), "crc32"},
      {changed("\"12345678\"", "305419896"), "crc32"},
      {changed("\"model.safetensors\"", "\"model2.safetensors\""), "model2.safetensors"},
      {changed("\"format\": \"normlab checkpoint\", ", ""), "missing key \"format\""},
      {changed("\"step\": 12,", "\"step\": 12, \"extra\": 0,"), "unexpected key \"extra\""},
      {changed("\"bytes\": 20", "\"bytes\": \"20\""), "bytes"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string message = error_of([&] { parse_manifest(text, "run/m.json"); });
    EXPECT_EQ(message.rfind("[checkpoint] run/m.json: ", 0), 0u) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << text << "\n" << message;
  }
}

TEST(CheckpointFormat, TrainerStateRoundTripsAndRefusesAnUnusableGenerator) {
  const TrainerState s{7, {1, 2, 3, 18446744073709551615ull, 0, 0}};
  const TrainerState again = parse_trainer_state(trainer_state_to_json(s), "t.json");
  EXPECT_EQ(again.step, 7);
  EXPECT_EQ(again.data_generator, s.data_generator);
  for (const char* text : {R"({"step": 1, "data_generator": [0, 0, 0, 0, 0, 0]})",
                           R"({"step": 1, "data_generator": [1, 2, 3, 4, 5]})",
                           R"({"step": 1, "data_generator": [1, 2, 3, 4, 7, 0]})",
                           R"({"step": 1, "data_generator": [1, 2, 3, -4, 0, 0]})"}) {
    const std::string message = error_of([&] { parse_trainer_state(text, "run/t.json"); });
    EXPECT_NE(message.find("run/t.json"), std::string::npos) << message;
    EXPECT_NE(message.find("data_generator"), std::string::npos) << message;
  }
}

struct CheckpointedRun {
  test::ScratchDir dir;
  std::string config_path = dir.write("tiny.toml", test::tiny_config_toml(dir.file("runs")));
  fs::path run = dir.path() / "runs" / "r";
  TrainResult train_run(int64_t stop_after, bool resume = false) const {
    TrainOptions options;
    options.quiet = true;
    options.stop_after = stop_after;
    if (resume) options.resume_dir = run.string();
    return train(resume ? RunConfig{} : load_config(config_path, {"train.name=r", "train.checkpoint_every=1"}),
                 options);
  }
};

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(CheckpointLayout, OneLinkNamesTheOnlyGenerationAndItsManifestListsEveryFile) {
  CheckpointedRun t;
  t.train_run(3);
  ASSERT_TRUE(fs::is_symlink(t.run / "checkpoint"));
  const fs::path target = fs::read_symlink(t.run / "checkpoint");
  EXPECT_EQ(target.parent_path(), "checkpoints");
  EXPECT_EQ(target.filename().string().rfind("step-00000003.", 0), 0u) << target;
  EXPECT_EQ(entries(t.run / "checkpoints"), std::vector<std::string>{target.filename().string()});
  EXPECT_EQ(entries(t.run / target), (std::vector<std::string>{"manifest.json", "model.safetensors",
                                                               "optimizer.safetensors", "trainer_state.json"}));
  const CheckpointManifest m = parse_manifest(test::file_bytes(t.run / target / "manifest.json"), "manifest.json");
  EXPECT_EQ(m.step, 3);
  for (const auto& [name, digest] : m.files) {
    const std::string bytes = test::file_bytes(t.run / target / name);
    EXPECT_EQ(digest.bytes, bytes.size()) << name;
    EXPECT_EQ(digest.crc32, digest_of(bytes).crc32) << name;
  }
}

TEST(CheckpointLayout, LeftoversOfInterruptedWritersAreRemovedAtTheNextStart) {
  CheckpointedRun t;
  t.train_run(3);
  const fs::path current = fs::read_symlink(t.run / "checkpoint");
  fs::create_directory(t.run / "checkpoints" / "step-00000004.Zx81Qa");           // a half-written generation
  test::put_file_bytes(t.run / "checkpoints" / "step-00000004.Zx81Qa" / "model.safetensors", "half");
  test::put_file_bytes(t.run / "metrics.jsonl.tmp.a1B2c3", "partial");             // an AtomicFile temporary
  fs::create_symlink("checkpoints/step-00000004.Zx81Qa", t.run / "checkpoint.tmp.Zx81Qa");  // an unswitched link
  test::put_file_bytes(t.run / "notes.tmp.txt", "mine");                           // not a temporary's name
  EXPECT_EQ(t.train_run(1, true).steps_done, 4);
  const fs::path now = fs::read_symlink(t.run / "checkpoint");
  EXPECT_NE(now, current);
  EXPECT_EQ(entries(t.run / "checkpoints"), std::vector<std::string>{now.filename().string()});
  EXPECT_FALSE(fs::exists(t.run / "metrics.jsonl.tmp.a1B2c3"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(t.run / "checkpoint.tmp.Zx81Qa")));
  EXPECT_TRUE(fs::exists(t.run / "notes.tmp.txt"));
}

TEST(CheckpointLayout, ACheckpointDirectoryOfTheOldLayoutIsAClearError) {
  CheckpointedRun t;
  t.train_run(3);
  const fs::path target = t.run / fs::read_symlink(t.run / "checkpoint");
  fs::remove(t.run / "checkpoint");
  fs::rename(target, t.run / "checkpoint");
  fs::remove(t.run / "checkpoint" / "manifest.json");
  TrainOptions options;
  options.quiet = true;
  options.resume_dir = t.run.string();
  const std::string message = error_of([&] { train(RunConfig{}, options); });
  EXPECT_NE(message.find("checkpoint format 1"), std::string::npos) << message;
}

// load_checkpoint checks the whole checkpoint before it changes anything: a bad optimizer file
// (read after the model file) leaves the model's weights and the generator as they were.
TEST(CheckpointLayout, AFailedLoadChangesNeitherModelNorOptimizerNorGenerator) {
  CheckpointedRun t;
  t.train_run(3);
  test::rewrite_tensors(t.run, "optimizer.safetensors", [](std::vector<std::pair<std::string, Tensor>>& s) {
    s.emplace_back("m.no_such_parameter", Tensor::zeros({1}, DType::F32));
  });
  RunConfig c = load_config((t.run / "config.toml").string());
  c.model.vocab_size = c.data.copy_vocab;
  TransformerLM model(c.model);
  auto optimizer = make_optimizer(c.optim, model.named_parameters());
  Generator gen(99);
  std::vector<std::vector<double>> before;
  for (const auto& [name, p] : model.named_parameters()) before.push_back(p.value().to_vector());
  const auto gen_before = gen.state();
  const std::string message = error_of([&] { load_checkpoint(t.run.string(), model, *optimizer, gen); });
  EXPECT_NE(message.find("m.no_such_parameter"), std::string::npos) << message;
  size_t i = 0;
  for (const auto& [name, p] : model.named_parameters()) EXPECT_EQ(p.value().to_vector(), before[i++]) << name;
  EXPECT_TRUE(optimizer->state().empty());
  EXPECT_EQ(gen.state(), gen_before);
}

}  // namespace
}  // namespace normlab
