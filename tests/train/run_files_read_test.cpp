// The readers of a run's own files as the plots, resume and Python take them (train/run_dir.h):
// read_step_csv (grad_norms.csv, dynamics.csv) and read_metrics (metrics.jsonl). A run still
// writing leaves its last line cut short, which is left out; anything else malformed is an error
// naming the file, the line and the column.
#include <gtest/gtest.h>

#include <cmath>

#include "train/run_dir.h"
#include "test_util.h"

namespace normlab {
namespace {

using test::error_of;
using test::ScratchDir;

TEST(ReadStepCsv, NumbersNanInfEmptyCellsAndACutLastLine) {
  ScratchDir dir;
  const std::string path = dir.write("g.csv", "step,a,\"b,c\"\n1,0.5,\n2,nan,-inf\n3,1e3,inf\n4,2");
  const CsvTable t = read_step_csv(path);
  ASSERT_EQ(t.columns, (std::vector<std::string>{"step", "a", "b,c"}));  // a quoted comma is in the name
  ASSERT_EQ(t.rows.size(), 3u);  // "4,2" has no newline: a row being written
  EXPECT_EQ(t.rows[0][0], 1.0);
  EXPECT_EQ(t.rows[0][1], 0.5);
  EXPECT_TRUE(std::isnan(t.rows[0][2]));
  EXPECT_TRUE(std::isnan(t.rows[1][1]));
  EXPECT_EQ(t.rows[1][2], -INFINITY);
  EXPECT_EQ(t.rows[2][1], 1000.0);
  EXPECT_EQ(t.rows[2][2], INFINITY);
}

TEST(ReadStepCsv, MalformedLinesAreErrorsNamingFileLineAndColumn) {
  ScratchDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"step,a\n1,3x\n2,1\n", "g.csv:2: column 'a': '3x' is not a number"},
      {"step,a\n1,1\n2\n3,1\n", "g.csv:3: 1 cells, the header has 2"},
      {"step,a\n1,1\n2,1,5\n", "g.csv:3: 3 cells, the header has 2"},
      {"step,a\n1,\"2,5\"\n", "g.csv:2: column 'a': '2,5' is not a number"},
      {"step,a\n1.5,1\n", "g.csv:2: column 'step': '1.5' is not a whole number"},
      {"step,a\n1e300,1\n", "g.csv:2: column 'step': '1e300' is not a whole number"},
      {"step,a\n,1\n", "g.csv:2: column 'step': '' is not a whole number"},
      {"step,a\n 1,1\n", "g.csv:2: column 'step': ' 1' is not a whole number"},
      {"step,a,a\n1,1,1\n", "g.csv:1: the column 'a' appears twice"},
      {"a,step\n1,1\n", "g.csv:1: the header must start with the column 'step'"},
      {"step,a\n1,\"2\n3,4\n", "g.csv:2: unterminated quoted cell"},
      {"step,a", "has no header line"},
  };
  for (const auto& [text, message] : cases) {
    const std::string path = dir.write("g.csv", text);
    const std::string error = error_of([&] { read_step_csv(path); });
    EXPECT_NE(error.find(message), std::string::npos) << text << "\n-> " << error;
  }
}

TEST(ReadMetrics, OnlyACutLastLineIsLeftOut) {
  ScratchDir dir;
  const std::string cut = dir.write("m.jsonl", "{\"step\": 1}\n\n{\"step\": 2}\n{\"step\": 3, \"tra");
  ASSERT_EQ(read_metrics(cut).size(), 2u);
  EXPECT_EQ(read_metrics(cut)[1]["step"], 2);
  const std::string broken = dir.write("b.jsonl", "{\"step\": 1}\n{\"step\": 2,\n{\"step\": 3}\n");
  EXPECT_NE(error_of([&] { read_metrics(broken); }).find("b.jsonl:2: not a JSON object"), std::string::npos);
  const std::string array = dir.write("a.jsonl", "[1, 2]\n{\"step\": 3}\n");
  EXPECT_NE(error_of([&] { read_metrics(array); }).find("a.jsonl:1: not a JSON object"), std::string::npos);
}

}  // namespace
}  // namespace normlab
