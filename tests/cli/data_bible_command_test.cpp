// `normlab data bible --out DIR` (cli/data_command.cpp) on the SWORD modules scripts/setup.sh
// installs: the corpus folder it writes reads back through the checked reader with the counts its
// manifest states, the test split is the manifest's books, and `normlab baseline` scores it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>

#include "command_util.h"
#include "core/files.h"
#include "data/translation_corpus.h"
#include "test_util.h"

namespace normlab {
namespace {

TEST(DataBibleCommand, WritesACorpusThatReadsBackAsItsManifestSays) {
  test::ScratchDir dir;
  const std::string out = dir.file("bible");
  const auto run = test::run_command(test::kNormlab + " data bible --out " + out);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("31102 source verses"), std::string::npos) << run.output;
  const TranslationCorpus corpus = load_translation_corpus(out);
  const auto manifest = nlohmann::json::parse(read_whole_file(std::filesystem::path(out) / "manifest.json", "test"));
  EXPECT_EQ(manifest["splits"]["train"]["verses"].get<size_t>(), corpus.train.size());
  EXPECT_EQ(manifest["splits"]["valid"]["verses"].get<size_t>(), corpus.valid.size());
  EXPECT_EQ(manifest["splits"]["test"]["verses"].get<size_t>(), corpus.test.size());
  const std::set<std::string> test_books = manifest["rule"]["test_books"].get<std::set<std::string>>();
  for (const CorpusPair& p : corpus.test) EXPECT_TRUE(test_books.count(book_of(p.ref))) << p.ref;
  for (const CorpusPair& p : corpus.train) EXPECT_FALSE(test_books.count(book_of(p.ref))) << p.ref;
  for (const CorpusPair& p : corpus.valid) EXPECT_FALSE(p.second.empty()) << p.ref;
  EXPECT_EQ(manifest["modules"][1]["name"], "engWEB2015eb");

  // The baselines of a config on this corpus, against both references.
  const auto baseline = test::run_command(test::kNormlab + " baseline " + std::string(NORMLAB_SOURCE_DIR) +
                                          "/experiments/configs/bible_translation.toml data.source=corpus:" + out);
  ASSERT_EQ(baseline.exit_code, 0) << baseline.output;
  EXPECT_NE(baseline.output.find("word by word (Dice)"), std::string::npos) << baseline.output;
  EXPECT_NE(baseline.output.find("nrefs:2"), std::string::npos) << baseline.output;
}

TEST(DataBibleCommand, AnUnknownModuleIsAnErrorAndWritesNoManifest) {
  test::ScratchDir dir;
  const std::string out = dir.file("bible");
  const auto run = test::run_command(test::kNormlab + " data bible --out " + out + " --target engNoSuch");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("the SWORD module engNoSuch is not installed"), std::string::npos) << run.output;
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(out) / "manifest.json"));
}

}  // namespace
}  // namespace normlab
