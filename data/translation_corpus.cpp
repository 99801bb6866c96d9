#include "data/translation_corpus.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/digest.h"
#include "core/error.h"
#include "core/files.h"
#include "data/utf8.h"

namespace normlab {

namespace {

constexpr const char* kOp = "corpus";
using Json = nlohmann::json;

Json split_counts(const std::vector<AlignedVerse>& verses) {
  Json books = Json::object();
  for (const AlignedVerse& verse : verses) books[verse.book] = books.value(verse.book, 0) + 1;
  return {{"verses", verses.size()}, {"books", books}};
}

const Json& member(const Json& object, const char* key, const std::string& where) {
  NL_CHECK(object.is_object() && object.contains(key), kOp, "{}: missing key \"{}\"", where, key);
  return object.at(key);
}

// The lines of one split's TSV (with its refs), each split into `columns` fields.
std::vector<CorpusPair> parse_split(const std::string& name, const std::string& tsv, const std::string& refs,
                                    size_t columns, const std::string& dir) {
  const std::string where = (std::filesystem::path(dir) / (name + ".tsv")).string();
  const int64_t bad = utf8::first_invalid(tsv);
  NL_CHECK(bad < 0, kOp, "{}: not valid UTF-8 at byte {}", where, bad);
  const int64_t bad_ref = utf8::first_invalid(refs);  // refs name books in the manifest (JSON: UTF-8 only)
  NL_CHECK(bad_ref < 0, kOp, "{}: not valid UTF-8 at byte {}",
           (std::filesystem::path(dir) / (name + ".refs")).string(), bad_ref);
  std::vector<std::string> ref_lines;
  for (size_t start = 0; start < refs.size();) {
    const size_t end = std::min(refs.find('\n', start), refs.size());
    ref_lines.push_back(refs.substr(start, end - start));
    start = end + 1;
  }
  std::vector<CorpusPair> pairs;
  int64_t line = 0;
  for (size_t start = 0; start < tsv.size();) {
    const size_t end = std::min(tsv.find('\n', start), tsv.size());
    const std::string text = tsv.substr(start, end - start);
    start = end + 1;
    ++line;
    std::vector<std::string> fields(1);
    for (const char c : text) {
      if (c == '\t') fields.emplace_back();
      else fields.back().push_back(c);
    }
    NL_CHECK(fields.size() == columns, kOp, "{}:{}: {} tab-separated fields, expected {}", where, line,
             fields.size(), columns);
    for (const std::string& field : fields) NL_CHECK(!field.empty(), kOp, "{}:{}: an empty field", where, line);
    NL_CHECK(static_cast<size_t>(line) <= ref_lines.size(), kOp, "{}:{}: {}.refs has only {} lines", where, line,
             name, ref_lines.size());
    pairs.push_back({ref_lines[line - 1], fields[0], fields[1], columns == 3 ? fields[2] : ""});
  }
  NL_CHECK(pairs.size() == ref_lines.size(), kOp, "{} has {} lines but {}.refs has {}", where, pairs.size(), name,
           ref_lines.size());
  return pairs;
}

}  // namespace

std::string corpus_manifest(const CorpusSplits& splits, const SplitRule& rule, const AlignmentCounts& counts,
                            const std::vector<std::string>& shifted, const std::vector<SwordModuleInfo>& modules,
                            const std::map<std::string, std::string>& files) {
  Json manifest;
  manifest["format"] = kTranslationCorpusFormat;
  for (const SwordModuleInfo& m : modules)
    manifest["modules"].push_back({{"name", m.name}, {"role", m.role}, {"package", m.package},
                                   {"version", m.version}, {"versification", m.versification},
                                   {"language", m.language}});
  manifest["rule"] = {{"test_books", rule.test_books},
                      {"valid_per_10000", rule.valid_per_10000},
                      {"near_duplicate_share", rule.near_duplicate_share},
                      {"shift_margin", rule.shift_margin},
                      {"text", "test: the listed books; validation: fnv1a_64(ref) % 10000 < valid_per_10000 of the "
                               "rest; a test or validation verse whose target shares more than "
                               "near_duplicate_share of its distinct word 4-grams with one verse of another split "
                               "is dropped; chapters whose source is numbered one verse off (shift_margin) are dropped "
                               "before the split"}};
  manifest["alignment"] = {{"source_verses", counts.source_verses}, {"aligned", counts.aligned},
                           {"missing_target", counts.missing_target}, {"missing_second", counts.missing_second},
                           {"empty", counts.empty}};
  manifest["splits"] = {{"train", split_counts(splits.train)}, {"valid", split_counts(splits.valid)},
                        {"test", split_counts(splits.test)}};
  manifest["shifted_chapters"] = shifted;
  manifest["near_duplicates"] = splits.near_duplicates;
  for (const auto& [name, bytes] : files) {
    const FileDigest digest = digest_of(bytes);
    manifest["files"][name] = {{"bytes", digest.bytes}, {"crc32", crc32_hex(digest.crc32)}};
  }
  return manifest.dump(1) + "\n";
}

TranslationCorpus parse_translation_corpus(const std::string& dir, const std::string& manifest_text,
                                           const std::map<std::string, std::string>& files) {
  const std::string manifest_path = (std::filesystem::path(dir) / "manifest.json").string();
  Json manifest;
  try {
    manifest = Json::parse(manifest_text);
  } catch (const Json::exception& e) {
    fail(kOp, "{}: not valid JSON ({})", manifest_path, e.what());
  }
  const Json& format = member(manifest, "format", manifest_path);
  NL_CHECK(format == kTranslationCorpusFormat, kOp, "{}: format {} is not {}", manifest_path, format.dump(),
           kTranslationCorpusFormat);
  const Json& listed = member(manifest, "files", manifest_path);
  std::map<std::string, const std::string*> checked;
  for (const char* name : {"train.tsv", "train.refs", "valid.tsv", "valid.refs", "test.tsv", "test.refs"}) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    const Json& entry = member(listed, name, manifest_path + " files");
    const auto file = files.find(name);
    NL_CHECK(file != files.end(), kOp, "{}: missing (the manifest lists it)", path);
    const FileDigest digest = digest_of(file->second);
    const bool same = entry.is_object() && entry.value("bytes", Json()) == digest.bytes &&
                      entry.value("crc32", Json()) == crc32_hex(digest.crc32);
    NL_CHECK(same, kOp, "{} is damaged or was edited: {} bytes with CRC-32 {}, but {} lists {}", path, digest.bytes,
             crc32_hex(digest.crc32), manifest_path, entry.dump());
    checked[name] = &file->second;
  }
  TranslationCorpus corpus;
  corpus.train = parse_split("train", *checked["train.tsv"], *checked["train.refs"], 2, dir);
  corpus.valid = parse_split("valid", *checked["valid.tsv"], *checked["valid.refs"], 3, dir);
  corpus.test = parse_split("test", *checked["test.tsv"], *checked["test.refs"], 3, dir);
  NL_CHECK(!corpus.train.empty(), kOp, "{}: the training split is empty", dir);
  return corpus;
}

TranslationCorpus load_translation_corpus(const std::string& dir) {
  const std::filesystem::path root(dir);
  NL_CHECK(std::filesystem::exists(root / "manifest.json"), kOp,
           "{} has no manifest.json (build a corpus with: normlab data bible --out {})", dir, dir);
  const std::string manifest_text = read_whole_file(root / "manifest.json", kOp);
  std::map<std::string, std::string> files;
  for (const char* name : {"train.tsv", "train.refs", "valid.tsv", "valid.refs", "test.tsv", "test.refs"})
    if (std::filesystem::exists(root / name)) files[name] = read_whole_file(root / name, kOp);
  return parse_translation_corpus(dir, manifest_text, files);
}

}  // namespace normlab
