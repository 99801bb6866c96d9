// safetensors with bfloat16 and float16 tensors: a hand-made file (header JSON + little-endian
// payload written byte by byte) checks the reader against values worked out by hand, and the writer
// must produce the same payload bytes and dtype codes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/files.h"
#include "io/safetensors.h"
#include "test_util.h"

namespace normlab {
namespace {

using test::error_of;
using test::ScratchDir;

std::string length_prefixed(const std::string& header, const std::string& data) {
  std::string bytes(8, '\0');
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return bytes + header + data;
}

// bfloat16 0x3f80 = 1, 0xc040 = -3, 0x3e00 = 0.125, 0x7f80 = +inf;
// float16 0x3c00 = 1, 0xc200 = -3, 0x0001 = 2^-24 (smallest subnormal), 0x7bff = 65504 (largest).
const std::string kPayload("\x80\x3f\x40\xc0\x00\x3e\x80\x7f"
                           "\x00\x3c\x00\xc2\x01\x00\xff\x7b", 16);
const std::string kHeader =
    R"({"b":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]},)"
    R"("h":{"dtype":"F16","shape":[2,2],"data_offsets":[8,16]}})";

TEST(SafetensorsHalf, ReadsAHandMadeFile) {
  const SafetensorsFile file = parse_safetensors("hand.safetensors", length_prefixed(kHeader, kPayload));
  ASSERT_EQ(file.get("b").dtype(), DType::BF16);
  EXPECT_EQ(file.get("b").shape(), (Shape{4}));
  EXPECT_EQ(file.get("b").to_vector(),
            (std::vector<double>{1.0, -3.0, 0.125, std::numeric_limits<double>::infinity()}));
  ASSERT_EQ(file.get("h").dtype(), DType::F16);
  EXPECT_EQ(file.get("h").shape(), (Shape{2, 2}));
  EXPECT_EQ(file.get("h").to_vector(), (std::vector<double>{1.0, -3.0, std::ldexp(1.0, -24), 65504.0}));
  // Converted to float32 on request, exactly.
  EXPECT_EQ(file.get("h").to(DType::F32).to_vector(), file.get("h").to_vector());
}

TEST(SafetensorsHalf, WriterKeepsTheDtypeAndTheBytes) {
  ScratchDir dir;
  const SafetensorsFile hand = parse_safetensors("hand", length_prefixed(kHeader, kPayload));
  const std::string path = dir.file("half.safetensors");
  save_safetensors(path, {{"b", hand.get("b")}, {"h", hand.get("h")}});
  const std::string bytes = read_whole_file(path, "test");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(static_cast<uint8_t>(bytes[i])) << (8 * i);
  const std::string header = bytes.substr(8, n);
  EXPECT_NE(header.find(R"("b":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]})"), std::string::npos) << header;
  EXPECT_NE(header.find(R"("h":{"dtype":"F16","shape":[2,2],"data_offsets":[8,16]})"), std::string::npos) << header;
  EXPECT_EQ(bytes.substr(8 + n), kPayload);
  const SafetensorsFile back = load_safetensors(path);
  EXPECT_EQ(back.get("b").dtype(), DType::BF16);
  EXPECT_EQ(back.get("h").dtype(), DType::F16);
}

TEST(SafetensorsHalf, AWrongByteCountNamesTheFileAndTheTensor) {
  const std::string header = R"({"b":{"dtype":"BF16","shape":[4],"data_offsets":[0,6]}})";
  EXPECT_EQ(error_of([&] { parse_safetensors("m.safetensors", length_prefixed(header, kPayload)); }),
            "[safetensors] m.safetensors: tensor 'b': data_offsets [0, 6] hold 6 bytes, but BF16 (4,) needs 8");
}

}  // namespace
}  // namespace normlab
