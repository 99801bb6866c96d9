// Loading checkpoints and dumps validates everything before it changes anything (issue 12,
// findings 6, 7 and 8): a flipped bit, another dtype, a missing or unexpected tensor, an all-zero
// generator state or inconsistent steps are clear errors naming the file, and a resume that fails
// leaves the run's logs exactly as they were.
#include <gtest/gtest.h>

#include <filesystem>

#include "checkpoint_test_util.h"
#include "command_util.h"
#include "train/checkpoint.h"
#include "config/config.h"
#include "train/trainer.h"
#include "spawn_util.h"
#include "test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using test::checkpoint_file;
using test::error_of;
using test::file_bytes;
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

struct StoppedRun {
  test::ScratchDir dir;
  std::string config_path = dir.write("tiny.toml", test::tiny_config_toml(dir.file("runs")));
  fs::path run(const std::string& name) const { return dir.path() / "runs" / name; }

  // Trains `name` for `steps` of its 6 steps (a checkpoint at the stop) and returns its directory.
  fs::path train_stopped(const std::string& name, int64_t steps = 3) const {
    TrainOptions options;
    options.quiet = true;
    options.stop_after = steps;
    train(load_config(config_path, {"train.name=" + name}), options);
    return run(name);
  }
  std::string resume_error(const fs::path& run_dir) const {
    TrainOptions options;
    options.quiet = true;
    options.resume_dir = run_dir.string();
    return error_of([&] { train(RunConfig{}, options); });
  }
};

TEST(CheckpointLoad, AFlippedBitInAnyFileIsAnErrorNamingTheFile) {
  for (const char* file : {"model.safetensors", "optimizer.safetensors", "trainer_state.json"}) {
    StoppedRun t;
    const fs::path run = t.train_stopped("r");
    test::flip_bit(run, file);
    EXPECT_NE(t.resume_error(run).find(file), std::string::npos) << file;
  }
}

TEST(CheckpointLoad, WeightsOfAnotherDtypeAreAnError) {
  StoppedRun t;
  const fs::path run = t.train_stopped("r");
  test::rewrite_tensors(run, "model.safetensors", [](NamedTensors& tensors) {
    for (auto& [name, tensor] : tensors)
      if (name == "tok_emb.weight") tensor = tensor.to(DType::F64);
  });
  const std::string message = t.resume_error(run);
  EXPECT_NE(message.find("tok_emb.weight"), std::string::npos) << message;
  EXPECT_NE(message.find("float64"), std::string::npos) << message;
}

TEST(CheckpointLoad, AnUnexpectedOrMissingTensorIsAnError) {
  StoppedRun t;
  const fs::path run = t.train_stopped("r");
  test::rewrite_tensors(run, "model.safetensors", [](NamedTensors& tensors) {
    tensors.emplace_back("blocks.7.attn.extra", Tensor::zeros({2}, DType::F32));
  });
  std::string message = t.resume_error(run);
  EXPECT_NE(message.find("blocks.7.attn.extra"), std::string::npos) << message;
  EXPECT_NE(message.find("model.safetensors"), std::string::npos) << message;

  test::rewrite_tensors(run, "model.safetensors", [](NamedTensors& tensors) {
    tensors.erase(tensors.begin());  // the extra one stays last; the first one goes missing
  });
  message = t.resume_error(run);
  EXPECT_NE(message.find("model.safetensors"), std::string::npos) << message;
}

TEST(CheckpointLoad, OptimizerStateOfAnotherDtypeIsAnError) {
  StoppedRun t;
  const fs::path run = t.train_stopped("r");
  std::string changed;
  test::rewrite_tensors(run, "optimizer.safetensors", [&](NamedTensors& tensors) {
    for (auto& [name, tensor] : tensors) {
      if (changed.empty() && name.rfind("m.", 0) == 0) {
        tensor = tensor.to(DType::F64);
        changed = name;
      }
    }
  });
  ASSERT_FALSE(changed.empty());
  const std::string message = t.resume_error(run);
  EXPECT_NE(message.find(changed), std::string::npos) << message;
}

TEST(CheckpointLoad, SamplingLoadsOnlyVerifiedWeights) {
  StoppedRun t;
  const fs::path run = t.train_stopped("r");
  RunConfig c = load_config((run / "config.toml").string());
  c.model.vocab_size = c.data.copy_vocab;
  TransformerLM model(c.model);
  ASSERT_NO_THROW(load_model_weights(run.string(), model));
  test::flip_bit(run, "model.safetensors");
  const std::string message = error_of([&] { load_model_weights(run.string(), model); });
  EXPECT_NE(message.find("model.safetensors"), std::string::npos) << message;
}

// A dump from `normlab grads` feeds `bench train --losses-from`: a parameter of another dtype or
// one the model lacks is an error, not a silent conversion.
TEST(CheckpointLoad, GradsDumpWithAParameterOfAnotherDtypeOrUnknownNameIsAnError) {
  StoppedRun t;
  const std::string dump = t.dir.file("dump.safetensors");
  ASSERT_EQ(test::run_command(test::kNormlab + " grads " + t.config_path + " --out " + dump).exit_code, 0);
  const SafetensorsFile file = load_safetensors(dump);
  auto write_with = [&](const std::string& changed, const Tensor& value) {
    NamedTensors tensors;
    for (const std::string& n : file.names) tensors.emplace_back(n, n == changed ? value : file.tensors.at(n));
    if (!file.contains(changed)) tensors.emplace_back(changed, value);
    save_safetensors(dump, tensors, file.metadata);
    return test::run_command(test::kNormlab + " bench train " + t.config_path + " --losses-from " + dump +
                             " --steps 1");
  };
  const std::string name = "param.final_norm.weight";
  ASSERT_TRUE(file.contains(name));
  test::CommandResult r = write_with(name, file.tensors.at(name).to(DType::F64));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(name), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("float64"), std::string::npos) << r.output;

  save_safetensors(dump, NamedTensors(file.tensors.begin(), file.tensors.end()), file.metadata);
  r = write_with("param.blocks.0.bogus", Tensor::zeros({2}, DType::F32));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("param.blocks.0.bogus"), std::string::npos) << r.output;
}

// Resumes `run` in a child process (a hang is killed after a minute) and returns how it ended.
test::ProcessEnd resume_in_child(const StoppedRun& t, const fs::path& run) {
  const pid_t pid = test::spawn_normlab({"train", "--resume", run.string(), "--quiet"}, t.dir.file("resume.log"));
  return test::wait_at_most(pid, 60.0);
}

TEST(CheckpointLoad, AnAllZeroGeneratorStateIsAnErrorNotAHang) {
  StoppedRun t;
  const fs::path run = t.train_stopped("r");
  test::rewrite_trainer_state(run, [](nlohmann::json& state) { state["data_generator"] = {0, 0, 0, 0, 0, 0}; });
  const test::ProcessEnd end = resume_in_child(t, run);
  const std::string log = file_bytes(t.dir.file("resume.log"));
  EXPECT_EQ(end.exit_code, 1) << "signal " << end.signal << ": " << log;
  EXPECT_NE(log.find("trainer_state.json"), std::string::npos) << log;
}

// After a kill, the logs run ahead of the checkpoint; a resume cuts them back to it. A resume that
// fails must not: every damage below is detected, and the logs keep every byte.
TEST(CheckpointLoad, AFailedResumeKeepsEveryLogByte) {
  const std::vector<std::pair<std::string, std::function<void(const fs::path&)>>> damages = {
      {"all-zero generator", [](const fs::path& run) {
         test::rewrite_trainer_state(run, [](nlohmann::json& s) { s["data_generator"] = {0, 0, 0, 0, 0, 0}; });
       }},
      {"flipped bit", [](const fs::path& run) { test::flip_bit(run, "model.safetensors"); }},
      {"unexpected tensor", [](const fs::path& run) {
         test::rewrite_tensors(run, "model.safetensors",
                               [](NamedTensors& t) { t.emplace_back("extra", Tensor::zeros({1}, DType::F32)); });
       }},
      {"steps disagree", [](const fs::path& run) {
         test::rewrite_trainer_state(run, [](nlohmann::json& s) { s["step"] = 2; });
       }},
  };
  for (const auto& [what, damage] : damages) {
    StoppedRun t;
    TrainOptions quiet;
    quiet.quiet = true;
    train(load_config(t.config_path, {"train.name=full"}), quiet);
    const fs::path run = t.train_stopped("r");
    for (const char* log : {"metrics.jsonl", "grad_norms.csv", "summary.json"})
      fs::copy_file(t.run("full") / log, run / log, fs::copy_options::overwrite_existing);
    damage(run);
    const test::ProcessEnd end = resume_in_child(t, run);
    EXPECT_EQ(end.exit_code, 1) << what << ", signal " << end.signal << ": " << file_bytes(t.dir.file("resume.log"));
    for (const char* log : {"metrics.jsonl", "grad_norms.csv", "summary.json"})
      EXPECT_EQ(file_bytes(run / log), file_bytes(t.run("full") / log)) << what << ": " << log;
  }
}

}  // namespace
}  // namespace normlab
