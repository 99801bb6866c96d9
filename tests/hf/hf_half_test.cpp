// A bfloat16 or float16 Hugging Face checkpoint (most published ones are bfloat16) loads into a
// float32 or float64 model, converted on load: each weight is the half value, exactly.
#include <gtest/gtest.h>

#include <filesystem>

#include "test_util.h"
#include "hf/hf_checkpoint.h"
#include "io/safetensors.h"
#include "hf_test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using test::ScratchDir;
using testing::hf_fixture_dir;

// The fixture's checkpoint with every tensor passed through `convert`.
std::string converted_fixture(const ScratchDir& dir, const std::string& family,
                              const std::function<Tensor(const Tensor&)>& convert) {
  const fs::path out = dir.path() / family;
  fs::create_directories(out);
  fs::copy_file(fs::path(hf_fixture_dir(family)) / "config.json", out / "config.json");
  const SafetensorsFile file = load_safetensors(hf_fixture_dir(family) + "/model.safetensors");
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const std::string& name : file.names) tensors.emplace_back(name, convert(file.get(name)));
  save_safetensors((out / "model.safetensors").string(), tensors);
  return out.string();
}

TEST(HfHalf, HalfCheckpointsLoadIntoFloat32AndFloat64Models) {
  for (const std::string family : {"gpt2", "llama"}) {
    const HfCheckpoint original = read_hf_checkpoint(hf_fixture_dir(family));
    for (DType half : {DType::BF16, DType::F16}) {
      ScratchDir dir;
      const std::string path = converted_fixture(dir, family, [&](const Tensor& t) { return t.to(half); });
      ASSERT_EQ(load_safetensors(path + "/model.safetensors").tensors.begin()->second.dtype(), half);
      for (const ParamDType dtype : {ParamDType::Float32, ParamDType::Float64}) {
        const HfCheckpoint read = read_hf_checkpoint(path, dtype);
        ASSERT_EQ(read.weights.size(), original.weights.size());
        for (size_t i = 0; i < read.weights.size(); ++i) {
          const auto& [name, w] = read.weights[i];
          ASSERT_EQ(name, original.weights[i].first);
          EXPECT_EQ(w.dtype(), dtype == ParamDType::Float32 ? DType::F32 : DType::F64) << name;
          // The float32 fixture rounded to the half type: what the file holds, exactly.
          EXPECT_EQ(w.to_vector(), original.weights[i].second.to(half).to_vector())
              << family << " " << dtype_name(half) << " " << name;
        }
        TransformerLM model(read.config);
        load_hf_weights(model, read);
      }
    }
  }
}

TEST(HfHalf, AnIntegerWeightNamesTheFileAndTheTensor) {
  ScratchDir dir;
  const std::string path = converted_fixture(dir, "llama", [](const Tensor& t) {
    return t.shape() == Shape{64} ? Tensor::zeros({64}, DType::I32) : t;
  });
  const std::string error = error_of([&] { read_hf_checkpoint(path); });
  EXPECT_NE(error.find("[hf] " + path + "/model.safetensors: tensor '"), std::string::npos) << error;
  EXPECT_NE(error.find("is int32; weights must be F32, F64, BF16 or F16"), std::string::npos) << error;
}

}  // namespace
}  // namespace normlab
