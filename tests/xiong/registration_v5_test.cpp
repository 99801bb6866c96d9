// Xiong v5's registration (xiong/registration_v5.toml) and its runner (xiong/v5/study_v5.h): the
// committed file loads and says what the plan says; a damaged file is refused naming the file, the
// line and the key; the runner trains every arm seed-major, refuses another build than the frozen
// one, and writes a record that names each run's build.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/files.h"
#include "io/csv.h"
#include "xiong/v5/registration_v5.h"
#include "xiong/v5/study_v5.h"
#include "made_up_corpus.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace normlab::xiong {
namespace {

const fs::path kSource = NORMLAB_SOURCE_DIR;
const std::string kRegistration = (kSource / "xiong" / "registration_v5.toml").string();

// The committed registration with `from` replaced by `to` (once), written to dir/xiong/reg.toml.
std::string edited_registration(const test::ScratchDir& dir, const std::string& from, const std::string& to) {
  std::string text = read_whole_file(kRegistration, "test");
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  fs::create_directories(dir.path() / "xiong");
  dir.write("xiong/reg.toml", text);
  return (dir.path() / "xiong" / "reg.toml").string();
}

TEST(RegistrationV5, TheCommittedFileFixesTheDesignOfThePlan) {
  const RegistrationV5 reg = load_registration_v5(kRegistration);
  EXPECT_EQ(reg.protocol, "v5");
  EXPECT_EQ(reg.arms_with_role("confirmatory").size(), 6u);
  EXPECT_EQ(reg.scored_checkpoint, "best");
  EXPECT_EQ(reg.beam, 5);
  EXPECT_DOUBLE_EQ(reg.length_penalty, 1.2);
  // The warmups keep the paper's fraction of an epoch: 4 and 0.5 epochs of 358 updates.
  EXPECT_EQ(reg.arm("post-w1432-1e-3").overrides[2], "schedule.warmup_steps=1432");
  EXPECT_EQ(reg.arm("post-w179-1e-3").overrides[2], "schedule.warmup_steps=179");
  const std::vector<std::string> run = reg.run_overrides();
  EXPECT_NE(std::find(run.begin(), run.end(), "train.epochs=" + std::to_string(reg.epochs)), run.end());
  EXPECT_NE(std::find(run.begin(), run.end(), "log.test_beam=5"), run.end());
  EXPECT_NE(std::find(run.begin(), run.end(), "log.test_length_penalty=1.2"), run.end());
  int paper = 0;
  for (const ClaimV5& c : reg.claims) {
    paper += c.family == "paper";
    EXPECT_FALSE(c.sesoi_reason.empty()) << c.id;
    EXPECT_LE(c.seeds, static_cast<int>(reg.confirmatory_seeds.size())) << c.id;
  }
  EXPECT_EQ(paper, 5);
  for (int seed : reg.confirmatory_seeds)
    EXPECT_EQ(std::count(reg.used_seeds.begin(), reg.used_seeds.end(), seed), 0) << seed;
}

TEST(RegistrationV5, ADamagedFileIsRefusedNamingTheFileLineAndKey) {
  test::ScratchDir dir;
  struct Case {
    std::string from, to, expected;
  };
  const std::vector<Case> cases = {
      {"confirmatory_seeds = [2001,", "confirmatory_seeds = [2,", "confirmatory seed 2 was used before"},
      {"budget_cpu_hours = 40.0", "budget_cpu_hours = 40.0\nbudget_cpu_hour = 4", "unknown key registration.budget_cpu_hour"},
      {"compared_arm = \"post-w1-5e-4\"", "compared_arm = \"post-w2-5e-4\"", "arm 'post-w2-5e-4' is not registered"},
      {"sesoi = 2.0\nsesoi_reason = \"2 BLEU", "sesoi_reason = \"2 BLEU", "claim 'W1@5e-4': sesoi is missing"},
      {"compared_arm = \"post-w179-1e-3\"", "compared_arm = \"post-w179-5e-4\"", "compares an exploratory arm"},
      {"decision = \"non_inferiority\"", "decision = \"noninferiority\"", "decision 'noninferiority' is none of"},
      {"epochs = 10", "epochs = \"10\"", "registration.epochs must be an integer"},
  };
  for (const Case& c : cases) {
    const std::string path = edited_registration(dir, c.from, c.to);
    const std::string message = test::error_of([&] { load_registration_v5(path); });
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.to << "\n" << message;
    EXPECT_NE(message.find("reg.toml"), std::string::npos) << message;
  }
}

TEST(StudyV5, ThePointsAreSeedMajorSoThatACutStudyHasWholeSeeds) {
  const RegistrationV5 reg = load_registration_v5(kRegistration);
  const auto arms = reg.arms_with_role("confirmatory");
  const std::vector<StudyPointV5> points = study_points(arms, {2001, 2002});
  ASSERT_EQ(points.size(), 2 * arms.size());
  for (size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i].seed, i < arms.size() ? 2001 : 2002);
    EXPECT_EQ(points[i].arm, arms[i % arms.size()]);
  }
  EXPECT_EQ(points[1].name, arms[1]->id + ",seed=2001");
}

// A registration of two arms on the made-up corpus, run quick by the built CLI: every arm trains,
// the init probe profiles both stacks, and the record names each run's build and test BLEU.
TEST(StudyV5, AQuickStudyTrainsEveryArmProbesBothStacksAndRecordsEachRunsBuild) {
  test::ScratchDir dir;
  const std::string corpus = test::write_made_up_corpus(dir);
  dir.write("base.toml", read_whole_file(kSource / "experiments" / "configs" / "bible_translation.toml", "test"));
  std::string text = read_whole_file(kRegistration, "test");
  const std::string base_key = "base_config = \"experiments/configs/bible_translation.toml\"";
  text.replace(text.find(base_key), base_key.size(), "base_config = \"base.toml\"");
  text.replace(text.find("overrides = []"), 14,
               "overrides = [\"data.source=corpus:" + corpus + "\", \"data.sentencepiece_vocab=18\", "
               "\"train.max_tokens=64\", \"model.context_length=24\", \"train.context=24\"]");
  fs::create_directories(dir.path() / "xiong");
  dir.write("xiong/reg.toml", text);
  StudyV5Options o;
  o.registration = (dir.path() / "xiong" / "reg.toml").string();
  o.quick = true;
  o.only = {"post-w1-1e-3", "pre-sec4"};
  o.out_dir = (dir.path() / "out").string();
  o.record_dir = (dir.path() / "record").string();
  o.normlab_binary = NORMLAB_BINARY_DIR "/normlab";
  o.quiet = true;
  run_study_v5(o);
  const CsvTable runs = read_csv(dir.path() / "record" / "runs.csv");
  ASSERT_EQ(runs.rows.size(), 2u);
  const std::string record = read_whole_file(dir.path() / "record" / "runs.csv", "test");
  EXPECT_NE(record.find("\"post-w1-1e-3,seed=1\",post-w1-1e-3,1,completed"), std::string::npos) << record;
  EXPECT_NE(record.find("\"pre-sec4,seed=1\",pre-sec4,1,completed"), std::string::npos) << record;
  EXPECT_EQ(record.find(" \n"), std::string::npos) << "a cell kept a line break: " << record;  // fingerprint.txt's
  const auto column = [&](const std::string& name) {
    return std::find(runs.columns.begin(), runs.columns.end(), name) - runs.columns.begin();
  };
  for (const auto& row : runs.rows) {
    EXPECT_GE(row[column("test_bleu")], 0.0);
    EXPECT_GE(row[column("test_bleu_last")], 0.0);
    EXPECT_EQ(row[column("epochs_done")], 1.0);
  }
  EXPECT_TRUE(fs::exists(dir.path() / "record" / "hypotheses" / "pre-sec4,seed=1.txt"));
  // The test references, from the corpus the runs trained on (24 made-up test verses).
  const std::string refs = read_whole_file(dir.path() / "record" / "test_references.tsv", "test");
  EXPECT_EQ(std::count(refs.begin(), refs.end(), '\n'), 24);
  EXPECT_EQ(std::count(refs.begin(), refs.end(), '\t'), 24);
  // The init probe: both stacks, both weights, one row per layer, for each init_probe arm.
  const CsvTable profile = read_csv(dir.path() / "out" / "init_profile.csv");
  EXPECT_EQ(profile.columns, (std::vector<std::string>{"arm", "seed", "stack", "weight", "layer", "norm_of_mean"}));
  EXPECT_EQ(profile.rows.size(), 2u * 2u * 2u * 1u);  // arms x stacks x weights x layers (quick: 1 layer)
  for (const auto& row : profile.rows) EXPECT_GT(row[5], 0.0);
}

TEST(StudyV5, AnotherBuildThanTheFrozenOneIsRefused) {
  test::ScratchDir dir;
  fs::create_directories(dir.path() / "out");
  dir.write("out/frozen_build.json", "{\"commit\": \"000000000000\", \"code_crc32\": \"00000000\"}\n");
  StudyV5Options o;
  o.registration = kRegistration;
  o.out_dir = (dir.path() / "out").string();
  o.only = {"pre-sec4"};
  o.quiet = true;
  o.normlab_binary = NORMLAB_BINARY_DIR "/normlab";  // never this test binary, should the check let it through
  const std::string message = test::error_of([&] { run_study_v5(o); });
  EXPECT_NE(message.find("froze the study on commit 000000000000"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(dir.path() / "out" / "pre-sec4,seed=2001"));
}

}  // namespace
}  // namespace normlab::xiong
