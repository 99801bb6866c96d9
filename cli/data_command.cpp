// normlab data bible --out DIR [--source MODULE --target MODULE --second MODULE]
// Builds the Spanish-English translation corpus from the Bibles Debian ships as SWORD modules
// (data/sword_modules.h, data/bible_corpus.h, data/translation_corpus.h): Reina-Valera 1909 as the
// source, the World English Bible as the training target, the King James Version as a second
// reference for validation and test. The manifest is removed first and written last, so a
// corpus whose build was cut off has none and is refused by every reader.
#include <fmt/ranges.h>

#include <filesystem>

#include "cli/commands.h"
#include "data/translation_corpus.h"
#include "io/atomic_file.h"

namespace normlab::cli {

namespace {

struct BibleOptions {
  std::string out, source = "spaRV1909eb", target = "engWEB2015eb", second = "engKJV2006eb";
};

void build_bible_corpus(const BibleOptions& options) {
  const BibleTexts texts = read_sword_bibles(options.source, options.target, options.second);
  AlignmentCounts counts;
  const std::vector<AlignedVerse> aligned = align_verses(texts.source, texts.target, texts.second, counts);
  const SplitRule rule;
  const std::vector<std::string> shifted = shifted_chapters(aligned, rule.shift_margin);
  const CorpusSplits splits = split_corpus(without_chapters(aligned, shifted), rule);
  const std::map<std::string, std::string> files = corpus_files(splits);
  const std::string manifest = corpus_manifest(splits, rule, counts, shifted, texts.modules, files);

  const std::filesystem::path dir(options.out);
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir / "manifest.json");
  for (const auto& [name, bytes] : files) write_file_atomic((dir / name).string(), bytes);
  write_file_atomic((dir / "manifest.json").string(), manifest);

  for (const SwordModuleInfo& m : texts.modules)
    fmt::print("{:<17} {} {} ({}, {} versification)\n", m.role, m.name, m.version, m.package, m.versification);
  fmt::print("{} source verses: {} aligned, {} without a target verse, {} without a second reference, {} empty\n",
             counts.source_verses, counts.aligned, counts.missing_target, counts.missing_second, counts.empty);
  fmt::print("{} chapters numbered one verse off their targets dropped ({})\n", shifted.size(),
             fmt::join(shifted, ", "));
  fmt::print("train {}, valid {}, test {} verses; {} near-duplicates left validation and test\n", splits.train.size(),
             splits.valid.size(), splits.test.size(), splits.near_duplicates.size());
  fmt::print("wrote {}\n", dir.string());
}

}  // namespace

CLI::App* add_data_command(CLI::App& app, int& /*exit_code: 0 unless it throws*/) {
  auto* cmd = app.add_subcommand("data", "Build data sets from what Debian ships");
  cmd->require_subcommand(1);
  auto* bible = cmd->add_subcommand("bible", "The Spanish-English Bible translation corpus (SWORD modules)");
  auto options = std::make_shared<BibleOptions>();
  bible->add_option("--out", options->out, "the corpus folder to write")->required()->type_name("DIR");
  bible->add_option("--source", options->source, "source-language module")->capture_default_str();
  bible->add_option("--target", options->target, "training target module")->capture_default_str();
  bible->add_option("--second", options->second, "second reference module")->capture_default_str();
  bible->callback([options] { build_bible_corpus(*options); });
  return cmd;
}

}  // namespace normlab::cli
