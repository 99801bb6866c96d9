// RecordTable (xiong/record_table.h), the reader of a study's committed record CSVs: cells found
// by column name, quoted cells kept whole, and a missing column, a short row or a cell that is
// not a number an error naming the file, line and column.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "xiong/record_table.h"

namespace normlab::xiong {
namespace {

struct TempFile {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("normlab-record-table-" + std::to_string(::getpid()) + ".csv");
  explicit TempFile(const std::string& text) { std::ofstream(path, std::ios::binary) << text; }
  ~TempFile() { std::filesystem::remove(path); }
};

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a normlab::Error";
  return "";
}

TEST(RecordTable, QuotedCellsKeepTheirCommasAndCellsAreFoundByName) {
  const TempFile f("run,reason,val_loss\npost,\"loss is nan, at step 7\",nan\npre,,2.5\n");
  const RecordTable t(f.path, {"run", "val_loss"});
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.text(0, "reason"), "loss is nan, at step 7");
  EXPECT_TRUE(std::isnan(t.number(0, "val_loss")));
  EXPECT_EQ(t.number(1, "val_loss"), 2.5);
  EXPECT_FALSE(t.has(1, "reason"));
  EXPECT_EQ(t.line(1), 3);
}

TEST(RecordTable, AMissingColumnAShortRowAndANonNumberAreErrors) {
  {
    const TempFile f("run,val_loss\npost,2\n");
    EXPECT_NE(error_of([&] { RecordTable(f.path, {"run", "seed"}); }).find(":1: no column 'seed'"), std::string::npos);
  }
  {
    const TempFile f("run,seed,val_loss\npost,1,2\npre,2\n");
    EXPECT_NE(error_of([&] { RecordTable(f.path, {"run"}); }).find(":3: 2 cells where the header has 3"),
              std::string::npos);
  }
  {
    const TempFile f("run,seed,val_loss\npost,1,2.5x\n");
    const RecordTable t(f.path, {"run"});
    EXPECT_NE(error_of([&] { t.number(0, "val_loss"); }).find(":2: column 'val_loss' holds '2.5x', not a number"),
              std::string::npos);
  }
}

TEST(RecordTable, AnIntegerIsAWholeNumberWithinTwoToThe31) {
  const TempFile f("step\n12\n-3\n2.5\nnan\n1e300\n2147483648\n");
  const RecordTable t(f.path, {"step"});
  EXPECT_EQ(t.integer(0, "step"), 12);
  EXPECT_EQ(t.integer(1, "step"), -3);
  for (size_t row = 2; row < t.size(); ++row)
    EXPECT_NE(error_of([&] { t.integer(row, "step"); }).find("not a whole number"), std::string::npos) << row;
}

}  // namespace
}  // namespace normlab::xiong
