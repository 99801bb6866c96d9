// Files of segments, one per line (data/segment_file.h), as sacreBLEU's command line reads them:
// where lines end, and the errors naming the file and line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/segment_file.h"

namespace normlab {
namespace {

using Segments = std::vector<std::string>;

TEST(SegmentFile, LinesEndAtNewlineAndTheLastNewlineIsOptional) {
  EXPECT_EQ(split_segments("", "f", "bleu"), Segments{});
  EXPECT_EQ(split_segments("a\nb", "f", "bleu"), (Segments{"a", "b"}));
  EXPECT_EQ(split_segments("a\nb\n", "f", "bleu"), (Segments{"a", "b"}));
  EXPECT_EQ(split_segments("a\n\nb \r\n", "f", "bleu"), (Segments{"a", "", "b \r"}));
  EXPECT_EQ(split_segments("\n", "f", "bleu"), (Segments{""}));
  EXPECT_EQ(split_segments("caf\xC3\xA9\n", "f", "bleu"), (Segments{"caf\xC3\xA9"}));
}

TEST(SegmentFile, ErrorsNameTheFileAndLine) {
  try {
    split_segments("ok\nok\nbad \xC3(\n", "hyp.txt", "bleu");
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "[bleu] hyp.txt:3: not valid UTF-8 (bad byte 0xC3 at byte 5 of the line)");
  }
  const auto dir = std::filesystem::temp_directory_path() / "normlab_segment_file_test";
  std::filesystem::create_directories(dir);
  const std::string missing = (dir / "missing.txt").string();
  try {
    read_segment_file(missing, "bleu");
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[bleu] " + missing), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_segment_file(dir.string(), "bleu"), Error);
  std::ofstream(dir / "two.txt") << "one\ntwo\n";
  EXPECT_EQ(read_segment_file((dir / "two.txt").string(), "bleu"), (Segments{"one", "two"}));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace normlab
