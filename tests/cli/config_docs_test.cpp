// Every config key explained from the one table of keys (config/config_keys.cpp): each has a
// description, docs/config.md is the output of `normlab config --markdown` (regenerate it when a
// key, default or description changes), and `normlab config --explain` finds keys and sections.
#include <gtest/gtest.h>

#include <set>

#include "command_util.h"
#include "config/config.h"
#include "config/config_docs.h"
#include "core/error.h"
#include "core/files.h"
#include "test_util.h"

namespace normlab {
namespace {

std::string normlab_command(const std::string& args) { return test::kNormlab + " " + args; }

TEST(ConfigDocs, EveryKeyHasADescriptionATypeAndADefault) {
  const std::vector<ConfigKeyDoc> docs = config_key_docs();
  ASSERT_EQ(docs.size(), config_key_names().size());
  std::set<std::string> descriptions;
  for (const ConfigKeyDoc& doc : docs) {
    SCOPED_TRACE(doc.section + "." + doc.name);
    EXPECT_GE(doc.description.size(), 10u) << "a key without a description: add one in config/config_keys.cpp";
    EXPECT_EQ(doc.description.find('\n'), std::string::npos) << "one line";
    EXPECT_TRUE(doc.type == "integer" || doc.type == "float" || doc.type == "bool" || doc.type == "string") << doc.type;
    EXPECT_FALSE(doc.default_value.empty());
    descriptions.insert(doc.description);
  }
  EXPECT_EQ(descriptions.size(), docs.size()) << "two keys share a description (copied and not adapted?)";
}

// The defaults shown are the structs' own (a default changed in the code changes the docs).
TEST(ConfigDocs, DefaultsAndAllowedValuesComeFromTheCode) {
  for (const ConfigKeyDoc& doc : config_key_docs()) {
    if (doc.section + "." + doc.name == "train.checkpoint_every") {
      EXPECT_EQ(doc.default_value, std::to_string(TrainConfig().checkpoint_every));
      EXPECT_EQ(doc.allowed, "0 to 2^53");
    }
    if (doc.section + "." + doc.name == "model.norm_placement") {
      EXPECT_EQ(doc.default_value, "\"pre\"");
      EXPECT_EQ(doc.allowed, "one of post, pre, none, sandwich, deepnorm, admin, mix_ln, b2t");
      EXPECT_EQ(doc.presets, "\"post\": gpt1; \"pre\": gpt2, llama, mistral, gemma, mixtral");
    }
    if (doc.section == "train" || doc.section == "optim") {
      EXPECT_EQ(doc.presets, "") << doc.name;
    }
  }
}

TEST(ConfigDocs, MarkdownFileIsUpToDate) {
  const auto r = test::run_command(normlab_command("config --markdown 2>/dev/null"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string file = read_whole_file(NORMLAB_SOURCE_DIR "/docs/config.md", "test");
  EXPECT_EQ(r.output, file) << "docs/config.md is out of date: run `build/normlab config --markdown > docs/config.md`";
  EXPECT_EQ(r.output, config_markdown());
  for (const std::string& key : config_key_names()) {
    const std::string name = key.substr(key.find('.') + 1);
    EXPECT_NE(file.find("| `" + name + "` |"), std::string::npos) << key;
  }
}

TEST(ConfigDocs, ExplainOneKeyOneSectionOrAll) {
  const auto one = test::run_command(normlab_command("config --explain train.checkpoint_every"));
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(one.output, "train.checkpoint_every = 0   (integer, 0 to 2^53)\n"
                        "    checkpoint every N steps; 0 = only at the end (and at least every 10 minutes of wall time)\n");
  const auto section = test::run_command(normlab_command("config --explain schedule"));
  EXPECT_EQ(section.exit_code, 0) << section.output;
  EXPECT_NE(section.output.find("schedule.min_lr = 0.0"), std::string::npos) << section.output;
  EXPECT_EQ(section.output.find("\ntrain."), std::string::npos) << section.output;  // no other section's keys
  EXPECT_EQ(section.output.rfind("schedule.kind = ", 0), 0u) << section.output;
  const auto all = test::run_command(normlab_command("config --explain"));
  for (const std::string& key : config_key_names())
    EXPECT_NE(all.output.find(key + " = "), std::string::npos) << key;
  // A bare key name: every section's key of that name.
  const auto seed = test::run_command(normlab_command("config --explain seed"));
  EXPECT_NE(seed.output.find("model.seed = 0"), std::string::npos) << seed.output;
  EXPECT_NE(seed.output.find("train.seed = 1"), std::string::npos) << seed.output;
}

TEST(ConfigDocs, AnUnknownKeyGetsASuggestion) {
  const auto r = test::run_command(normlab_command("config --explain train.chekpoint_every"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("[config] unknown key or section 'train.chekpoint_every' (did you mean "
                          "'train.checkpoint_every'?)"), std::string::npos) << r.output;
  EXPECT_THROW(explain_config("scheduel"), Error);
  try {
    explain_config("scheduel");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'schedule'?"), std::string::npos) << e.what();
  }
}

// With a config file: its values beside the defaults.
TEST(ConfigDocs, ExplainAConfigFileShowsItsValuesBesideTheDefaults) {
  test::ScratchDir dir;
  const std::string config = dir.write("c.toml", "[train]\ncheckpoint_every = 50\n");
  const auto r = test::run_command(normlab_command("config " + config + " train.steps=300 --explain train"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("train.checkpoint_every = 50   (default 0; integer, 0 to 2^53)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("train.steps = 300   (default 2000; integer, 1 to 2^53)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("train.batch_size = 12   (the default; integer, >= 1)"), std::string::npos) << r.output;
  // The file given to --explain itself is the config, not a key named like it.
  const auto same = test::run_command(normlab_command("config --explain " + config));
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find("train.checkpoint_every = 50   (default 0;"), std::string::npos) << same.output;
}

}  // namespace
}  // namespace normlab
