// The Hugging Face fixtures in the source tree and their inputs.json.
#pragma once
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor.h"

namespace normlab::testing {

inline std::string hf_fixture_dir(const std::string& family) {
  return std::string(NORMLAB_SOURCE_DIR) + "/tests/data/hf-fixtures/" + family;
}

struct HfInputs {
  Tensor ids;      // (B, T) int32
  Tensor targets;  // (B, T) int32: the shifted targets, HF's -100 as normlab's ignore index -1
};

inline HfInputs read_hf_inputs(const std::string& dir) {
  std::ifstream in(dir + "/inputs.json");
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str());
  auto flatten = [](const nlohmann::json& rows, bool map_ignore) {
    std::vector<int32_t> v;
    for (const auto& row : rows)
      for (const auto& x : row) v.push_back(map_ignore && x.get<int>() == -100 ? -1 : x.get<int32_t>());
    return v;
  };
  const int64_t b = static_cast<int64_t>(j["input_ids"].size()), t = static_cast<int64_t>(j["input_ids"][0].size());
  return {Tensor::from_ints(flatten(j["input_ids"], false), {b, t}),
          Tensor::from_ints(flatten(j["shifted_targets"], true), {b, t})};
}

}  // namespace normlab::testing
