// model.arch = "encoder" end to end: a masked-LM run on the character corpus learns (its
// validation loss, the masked-LM loss on the validation split, falls below the loss at
// initialization), stops and resumes bit for bit, and config errors for the key name file, line and key.
#include <gtest/gtest.h>

#include <cmath>

#include "command_util.h"
#include "config/config.h"
#include "train/trainer.h"
#include "test_util.h"
#include "trainer_test_util.h"

namespace normlab {
namespace {

using test::error_of;
using test::metrics_without_timing;
using test::quiet_options;
using test::ScratchDir;
using test::TinyRun;

// The shipped char_small_encoder shrunk to 2 layers of width 32 over 32 characters: about a second of CPU.
RunConfig tiny_char_encoder(const ScratchDir& dir, const std::vector<std::string>& more = {}) {
  std::vector<std::string> o = {"model.d_model=32", "model.n_heads=2", "model.n_layers=2",
                                "model.d_ff=64", "model.context_length=32", "train.context=32",
                                "train.batch_size=16", "train.steps=150", "train.threads=1",
                                "schedule.kind=constant", "schedule.warmup_steps=0", "optim.lr=3e-3",
                                "log.every=1", "log.eval_every=50", "log.eval_batches=4", "log.grad_norm_every=1000",
                                "train.out_dir=" + dir.file("runs")};
  o.insert(o.end(), more.begin(), more.end());
  return load_config(std::string(NORMLAB_SOURCE_DIR) + "/experiments/configs/char_small_encoder.toml", o);
}

TEST(EncoderTraining, MaskedLmValidationLossFallsBelowTheInitialLoss) {
  ScratchDir dir;
  const RunConfig c = tiny_char_encoder(dir);
  const TrainResult r = train(c, quiet_options());
  ASSERT_EQ(r.status, RunStatus::Completed) << r.reason;
  const auto metrics = metrics_without_timing(dir.path() / "runs" / c.train.name);
  ASSERT_FALSE(metrics.empty());
  const double initial = metrics.front()["train_loss"].get<double>();  // update 1: the initial weights' loss
  EXPECT_LT(r.final_val_loss, initial - 0.5) << "initial " << initial;
  // The vocabulary the model was built with: the corpus's characters + [MASK].
  const RunConfig saved = load_config((dir.path() / "runs" / c.train.name / "config.toml").string());
  EXPECT_EQ(saved.model.arch, ModelArch::Encoder);
  EXPECT_GT(saved.model.vocab_size, 2);
  EXPECT_LT(initial, 1.5 * std::log(static_cast<double>(saved.model.vocab_size)));
  // An encoder fills in masked tokens; `normlab sample` (next-token generation) refuses it.
  const std::string run_dir = (dir.path() / "runs" / c.train.name).string();
  const auto sampled = test::run_command(test::kNormlab + " sample " + run_dir + " --tokens 2");
  EXPECT_EQ(sampled.exit_code, 1) << sampled.output;
  EXPECT_NE(sampled.output.find("[sample] " + run_dir + " is a model.arch = \"encoder\" run"), std::string::npos)
      << sampled.output;
}

// The masking draws from the data generator, which checkpoints carry: a stopped and resumed run
// gets the uninterrupted one's batches, so its metrics are bit-identical.
TEST(EncoderTraining, StoppedAndResumedRunMatchesTheUninterruptedOne) {
  TinyRun t;  // the copy task's sequences, masked: one target per sequence, 4 per batch, a noisy loss
  const std::vector<std::string> o = {"model.arch=encoder", "train.divergence_loss=1e4", "model.dropout=0.1"};
  auto with = [&](const std::string& name) {
    auto more = o;
    more.push_back("train.name=" + name);
    return t.config(more);
  };
  const TrainResult full = train(with("full"), quiet_options());
  EXPECT_EQ(full.status, RunStatus::Completed) << full.reason;
  const TrainResult part = train(with("part"), quiet_options(3));
  EXPECT_EQ(part.status, RunStatus::Stopped);
  const TrainResult resumed = train(RunConfig{}, quiet_options(-1, t.run("part").string()));
  EXPECT_EQ(resumed.status, RunStatus::Completed);
  const auto m_full = metrics_without_timing(t.run("full")), m_part = metrics_without_timing(t.run("part"));
  ASSERT_EQ(m_part.size(), m_full.size());
  for (size_t i = 0; i < m_full.size(); ++i) EXPECT_EQ(m_part[i], m_full[i]) << "record " << i;
  EXPECT_EQ(resumed.final_val_loss, full.final_val_loss);
}

std::string file_error(const std::string& text) {
  ScratchDir dir;
  const std::string path = dir.write("x.toml", text);
  std::string message = error_of([&] { load_config(path); });
  if (message.rfind(path, 0) == 0) message = "x.toml" + message.substr(path.size());
  return message;
}

TEST(EncoderConfig, ErrorsNameFileLineAndKey) {
  EXPECT_EQ(file_error("[model]\nd_model = 64\narch = \"encodr\"\n"),
            "x.toml:3: [model] arch must be one of decoder, encoder, encoder_decoder; got 'encodr' (did you mean "
            "'encoder'?)");
  EXPECT_EQ(file_error("[model]\narch = \"encoder_decoder\"\n"),
            "x.toml:2: [model] arch 'encoder_decoder' trains on sequence pairs: data.source must be "
            "\"pairs:PATH\", \"seq2seq_copy\", \"seq2seq_reverse\" or \"seq2seq_translate\", got \"default\"");
  EXPECT_EQ(file_error("[data]\nsource = \"seq2seq_copy\"\n"),
            "x.toml:2: [model] data.source \"seq2seq_copy\" holds sequence pairs: it needs model.arch = "
            "\"encoder_decoder\", got \"decoder\"");
  EXPECT_EQ(file_error("[model]\narch = \"encoder\"\nsliding_window = 4\n"),
            "x.toml:3: [model] sliding_window (4) limits causal attention: arch 'encoder' attends to every "
            "position, so it must be 0");
  EXPECT_EQ(file_error("[data]\nmask_prob = 1.5\n"), "x.toml:2: [data] mask_prob must be in (0, 1), got 1.5");
  EXPECT_EQ(file_error("[log]\nbleu_pairs = 10\n"),
            "x.toml:2: [log] bleu_pairs (10) scores translations: it needs model.arch = \"encoder_decoder\", got "
            "\"decoder\"");
}

// model.arch = "decoder" and data.mask_prob = 0.15 (the defaults) read as absent keys, so runs made
// before the keys existed keep their fingerprints; any other value shows.
TEST(EncoderConfig, DefaultsLeaveTheFingerprintAsItWas) {
  const RunConfig defaults = load_config("", {});
  const std::string text = config_fingerprint_text(defaults);
  EXPECT_EQ(text.find("model.arch"), std::string::npos) << text;
  EXPECT_EQ(text.find("data.mask_prob"), std::string::npos) << text;
  const std::string base = config_fingerprint(defaults);
  EXPECT_EQ(config_fingerprint(load_config("", {"model.arch=decoder", "data.mask_prob=0.15"})), base);
  EXPECT_NE(config_fingerprint(load_config("", {"model.arch=encoder"})), base);
  EXPECT_NE(config_fingerprint(load_config("", {"data.mask_prob=0.2"})), base);
}

}  // namespace
}  // namespace normlab
