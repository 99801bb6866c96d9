// safetensors: round trips of every dtype with metadata, and malformed files as named errors.
#include <gtest/gtest.h>

#include <cstring>

#include "core/files.h"
#include "io/safetensors.h"
#include "test_util.h"

namespace normlab {
namespace {

using test::error_of;
using test::ScratchDir;

// A file by hand: 8-byte little-endian header length, the header, then `data`.
std::string hand_made(const std::string& header, const std::string& data) {
  std::string bytes(8, '\0');
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return bytes + header + data;
}

TEST(Safetensors, RoundTripsEveryDtypeAndMetadata) {
  ScratchDir dir;
  const Tensor f32 = Tensor::from_vector({1.5, -2.25, 3.0, 0.1, 1e-7, -1e30}, {2, 3}, DType::F32);
  const Tensor f64 = Tensor::from_vector({0.1, 1.0 / 3.0, -1e-300}, {3}, DType::F64);
  const Tensor i32 = Tensor::from_ints({7, -1, 2147483647, 0}, {2, 1, 2});
  const Tensor scalar = Tensor::scalar(42.0, DType::F64);
  const Tensor empty = Tensor::zeros({0, 4}, DType::F32);
  const std::string path = dir.file("model.safetensors");
  save_safetensors(path, {{"w.f32", f32}, {"a.f64", f64}, {"ids", i32}, {"s", scalar}, {"e", empty}},
                   {{"step", "100"}, {"format", "normlab"}});

  const SafetensorsFile file = load_safetensors(path);
  EXPECT_EQ(file.names, (std::vector<std::string>{"w.f32", "a.f64", "ids", "s", "e"}));
  EXPECT_EQ(file.metadata.at("step"), "100");
  EXPECT_EQ(file.metadata.at("format"), "normlab");
  ASSERT_EQ(file.get("w.f32").dtype(), DType::F32);
  EXPECT_EQ(file.get("w.f32").shape(), (Shape{2, 3}));
  EXPECT_EQ(file.get("w.f32").to_vector(), f32.to_vector());
  ASSERT_EQ(file.get("a.f64").dtype(), DType::F64);
  EXPECT_EQ(file.get("a.f64").to_vector(), f64.to_vector());  // bit-exact
  ASSERT_EQ(file.get("ids").dtype(), DType::I32);
  EXPECT_EQ(file.get("ids").shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(file.get("ids").to_ints(), i32.to_ints());
  EXPECT_EQ(file.get("s").shape(), Shape{});
  EXPECT_EQ(file.get("s").item(), 42.0);
  EXPECT_EQ(file.get("e").shape(), (Shape{0, 4}));
  EXPECT_FALSE(file.contains("nope"));
  EXPECT_NE(error_of([&] { file.get("nope"); }).find("no tensor named 'nope'"), std::string::npos);
}

TEST(Safetensors, LayoutFollowsTheFormat) {
  ScratchDir dir;
  const std::string path = dir.file("t.safetensors");
  save_safetensors(path, {{"x", Tensor::from_vector({1.0, 2.0}, {2}, DType::F32)}});
  const std::string bytes = read_whole_file(path, "test");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(static_cast<uint8_t>(bytes[i])) << (8 * i);
  ASSERT_EQ(bytes.size(), 8 + n + 8);  // header, then two float32
  EXPECT_EQ(n % 8, 0u);                // the data section starts 8-byte aligned
  const std::string header = bytes.substr(8, n);
  EXPECT_NE(header.find("\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}"), std::string::npos)
      << header;
  float values[2];
  std::memcpy(values, bytes.data() + 8 + n, 8);
  EXPECT_EQ(values[0], 1.0f);
  EXPECT_EQ(values[1], 2.0f);
}

TEST(Safetensors, SaveIsAtomicAndLeavesNoTemporaryFiles) {
  ScratchDir dir;
  const std::string path = dir.file("m.safetensors");
  save_safetensors(path, {{"a", Tensor::ones({3})}});
  save_safetensors(path, {{"b", Tensor::ones({4})}});  // replaces the file
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "m.safetensors");
  }
  EXPECT_EQ(files, 1);
  EXPECT_TRUE(load_safetensors(path).contains("b"));
  EXPECT_FALSE(load_safetensors(path).contains("a"));
}

TEST(Safetensors, RejectsBadNames) {
  ScratchDir dir;
  const std::string path = dir.file("m.safetensors");
  EXPECT_NE(error_of([&] { save_safetensors(path, {{"a", Tensor::ones({1})}, {"a", Tensor::ones({1})}}); })
                .find("'a' given twice"),
            std::string::npos);
  EXPECT_NE(error_of([&] { save_safetensors(path, {{"__metadata__", Tensor::ones({1})}}); })
                .find("invalid tensor name"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path));
}

// Each malformed file throws "[safetensors] <path>: <what>".
void expect_malformed(const ScratchDir& dir, const std::string& bytes, const std::string& what) {
  const std::string path = dir.write("bad.safetensors", bytes);
  const std::string message = error_of([&] { load_safetensors(path); });
  EXPECT_EQ(message.rfind("[safetensors] " + path + ": ", 0), 0u) << message;
  EXPECT_NE(message.find(what), std::string::npos) << message;
}

TEST(Safetensors, MalformedFilesAreNamedErrors) {
  ScratchDir dir;
  const std::string good_header = R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const std::string data(8, '\0');
  expect_malformed(dir, "", "too short for the 8-byte header length");
  expect_malformed(dir, std::string(5, '\0'), "too short");
  expect_malformed(dir, hand_made(good_header, data).substr(0, 20), "header length 54 is larger than the rest");
  expect_malformed(dir, hand_made(good_header, data).substr(0, 8 + 54 + 4), "out of range");  // truncated data
  expect_malformed(dir, hand_made(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}})", data),
                   "data_offsets [0, 16] out of range (the data section has 8 bytes)");
  expect_malformed(dir, hand_made(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[4,2]}})", data),
                   "out of range");
  expect_malformed(dir, hand_made(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", data),
                   "hold 8 bytes, but F32 (3,) needs 12");
  expect_malformed(dir, hand_made(R"({"x":{"dtype":"F8","shape":[2],"data_offsets":[0,8]}})", data),
                   "tensor 'x': unknown dtype 'F8'");
  expect_malformed(dir, hand_made(R"({"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", data),
                   "not a non-negative integer");
  expect_malformed(dir, hand_made(R"({"x":{"dtype":"F32","shape":[2]}})", data), "\"data_offsets\" must be");
  expect_malformed(dir, hand_made(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})", data),
                   "header is not valid JSON");
  expect_malformed(dir, hand_made("[1, 2]", data), "header is not a JSON object");
  expect_malformed(dir, hand_made(R"({"__metadata__":{"a":1}})", ""), "metadata 'a' is not a string");
  expect_malformed(dir,
                   hand_made(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"I32","shape":[1],"data_offsets":[4,8]}})",
                             data),
                   "tensors overlap");
  // Found by reasoning about the fuzz target: empty, but its strides would overflow int64.
  expect_malformed(dir, hand_made(R"({"x":{"dtype":"F32","shape":[0,4611686018427387904,4611686018427387904],)"
                                  R"("data_offsets":[0,0]}})", ""),
                   "is too large");
  std::string huge = hand_made(good_header, data);
  huge[7] = '\x7f';  // a header length of ~2^63
  expect_malformed(dir, huge, "is larger than the rest of the file");
}

TEST(Safetensors, EveryTruncationIsANamedError) {
  ScratchDir dir;
  const std::string path = dir.file("ok.safetensors");
  save_safetensors(path, {{"a", Tensor::ones({3}, DType::F64)}, {"b", Tensor::from_ints({1, 2}, {2})}},
                   {{"k", "v"}});
  const std::string bytes = read_whole_file(path, "test");
  for (size_t length = 0; length < bytes.size(); ++length) {
    const std::string cut = dir.write("cut.safetensors", bytes.substr(0, length));
    const std::string message = error_of([&] { load_safetensors(cut); });
    EXPECT_EQ(message.rfind("[safetensors] " + cut + ": ", 0), 0u) << "length " << length << ": " << message;
  }
}

TEST(Safetensors, MissingFileIsNamed) {
  EXPECT_EQ(error_of([] { load_safetensors("/nonexistent/x.safetensors"); }),
            "[safetensors] /nonexistent/x.safetensors: cannot open file");
}

}  // namespace
}  // namespace normlab
