// Reading back a run's TensorBoard event file in tests: the step of each event, in file order.
#pragma once
#include <filesystem>
#include <vector>

#include <gtest/gtest.h>

#include "core/files.h"
#include "train/tensorboard.h"
#include "io/tensorboard_format.h"

namespace normlab::test {

// The steps of the Events in an event file, -1 for the file_version record.
inline std::vector<int64_t> event_steps(const std::filesystem::path& file) {
  const std::string bytes = read_whole_file(file, "test");
  std::vector<int64_t> steps;
  for (const std::string_view record : tensorboard::split_records(bytes)) {
    const auto info = tensorboard::read_event_info(tensorboard::record_data(record));
    EXPECT_TRUE(info.has_value()) << file;
    if (info) steps.push_back(info->has_file_version ? -1 : info->step);
  }
  return steps;
}

// The steps of the events of a run directory's only event file.
inline std::vector<int64_t> run_event_steps(const std::filesystem::path& run) {
  const std::vector<std::filesystem::path> files = event_files(run);
  EXPECT_EQ(files.size(), 1u) << run;
  return files.empty() ? std::vector<int64_t>{} : event_steps(files.back());
}

}  // namespace normlab::test
