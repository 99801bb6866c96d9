// Provenance (train/provenance.h): each sitting of a run (its start, each resume that trains) is
// recorded with this build's commit and binary CRC-32, the CPU and the thread count; summary.json
// repeats the sittings with the start and end times and says when a run was not made by one
// build on one CPU; a damaged provenance file is an error naming it, and changes nothing.
#include <gtest/gtest.h>

#include <omp.h>

#include <regex>

#include "core/build_info.h"
#include "core/files.h"
#include "io/atomic_file.h"
#include "train/provenance.h"
#include "train/trainer.h"
#include "test_util.h"
#include "trainer_test_util.h"

namespace normlab {
namespace {

using test::quiet_options;
using test::read_summary;
using test::TinyRun;

const std::regex kUtc(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)");

TEST(Provenance, EachSittingIsRecordedAndTheSummaryRepeatsThem) {
  TinyRun t;
  ASSERT_EQ(train(t.config({"train.name=p", "train.steps=6"}), quiet_options(2)).status, RunStatus::Stopped);
  const nlohmann::json first = read_sittings(t.run("p"));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0]["first_step"], 0);
  EXPECT_EQ(first[0]["commit"], build_commit());
  EXPECT_EQ(first[0]["cpu"], cpu_model_name());
  EXPECT_EQ(first[0]["threads"], omp_get_max_threads());
  EXPECT_TRUE(std::regex_match(first[0]["code_crc32"].get<std::string>(), std::regex("[0-9a-f]{8}")));
  EXPECT_TRUE(std::regex_match(first[0]["started_utc"].get<std::string>(), kUtc));
  EXPECT_EQ(read_summary(t.run("p"))["sittings"], first);  // a stopped run's summary has them too

  ASSERT_EQ(train(RunConfig{}, quiet_options(-1, t.run("p").string())).status, RunStatus::Completed);
  const nlohmann::json both = read_sittings(t.run("p"));
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0], first[0]);
  EXPECT_EQ(both[1]["first_step"], 2);
  const nlohmann::json summary = read_summary(t.run("p"));
  EXPECT_EQ(summary["sittings"], both);
  EXPECT_EQ(summary["started_utc"], first[0]["started_utc"]);
  EXPECT_TRUE(std::regex_match(summary["finished_utc"].get<std::string>(), kUtc));
  EXPECT_TRUE(summary["one_build_one_cpu"].get<bool>());
}

TEST(Provenance, ARunResumedOnAnotherCpuSaysSo) {
  TinyRun t;
  ASSERT_EQ(train(t.config({"train.name=p", "train.steps=6"}), quiet_options(2)).status, RunStatus::Stopped);
  nlohmann::json sittings = read_sittings(t.run("p"));
  sittings[0]["cpu"] = "another CPU";
  write_file_atomic((t.run("p") / "provenance.json").string(), sittings.dump());
  ASSERT_EQ(train(RunConfig{}, quiet_options(-1, t.run("p").string())).status, RunStatus::Completed);
  EXPECT_FALSE(read_summary(t.run("p"))["one_build_one_cpu"].get<bool>());
}

TEST(Provenance, ADamagedProvenanceFileIsAnErrorNamingIt) {
  TinyRun t;
  ASSERT_EQ(train(t.config({"train.name=p", "train.steps=6"}), quiet_options(2)).status, RunStatus::Stopped);
  const auto path = t.run("p") / "provenance.json";
  for (const std::string damaged : {"[{\"started_utc\": 3}]", "{}", "[{\"started_utc\": \"x\""}) {
    write_file_atomic(path.string(), damaged);
    const std::string error = test::error_of([&] { train(RunConfig{}, quiet_options(-1, t.run("p").string())); });
    EXPECT_NE(error.find(path.string()), std::string::npos) << damaged << ": " << error;
    EXPECT_EQ(read_whole_file(path, "test"), damaged);
  }
}

}  // namespace
}  // namespace normlab
