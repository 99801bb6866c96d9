// TensorBoard event files (experiments/tensorboard*.h): CRC-32C against published vectors, the
// protobuf and TFRecord bytes against what TensorBoard's own Python package writes (the hex strings
// below were produced with tensorboard 2.21's event_pb2 and RecordWriter, not with our code), and
// the writer's files: cut back on resume, a cut-short record skipped. The ctest
// tensorboard_reader (tensorboard_reader_test.py) loads whole runs with TensorBoard's reader.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "core/files.h"
#include "train/tensorboard.h"
#include "io/tensorboard_format.h"
#include "event_file_util.h"
#include "test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;
namespace tb = tensorboard;

std::string from_hex(const std::string& hex) {
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return bytes;
}

std::string varint(uint64_t value) {
  std::string out;
  tb::append_varint(out, value);
  return out;
}

TEST(Crc32c, PublishedVectors) {
  EXPECT_EQ(tb::crc32c(""), 0x00000000u);
  EXPECT_EQ(tb::crc32c("123456789"), 0xE3069283u);  // the check value of CRC-32C
  // RFC 3720 (iSCSI), B.4: 32 bytes of zeros, of ones, ascending, descending.
  std::string zeros(32, '\0'), ones(32, '\xFF'), up, down;
  for (int i = 0; i < 32; ++i) {
    up += static_cast<char>(i);
    down += static_cast<char>(31 - i);
  }
  EXPECT_EQ(tb::crc32c(zeros), 0x8A9136AAu);
  EXPECT_EQ(tb::crc32c(ones), 0x62A8AB43u);
  EXPECT_EQ(tb::crc32c(up), 0x46DD794Eu);
  EXPECT_EQ(tb::crc32c(down), 0x113FDB5Cu);
}

TEST(Crc32c, MaskedAsTfRecordStoresIt) {
  // ((0xE3069283 >> 15) | (0xE3069283 << 17)) + 0xa282ead8, mod 2^32, by hand.
  EXPECT_EQ(tb::masked_crc32c("123456789"), 0xC78AB0E5u);
}

TEST(Protobuf, VarintsAsTheWireFormatSpecifies) {
  EXPECT_EQ(varint(0), std::string(1, '\0'));
  EXPECT_EQ(varint(1), "\x01");
  EXPECT_EQ(varint(127), "\x7F");
  EXPECT_EQ(varint(128), "\x80\x01");
  EXPECT_EQ(varint(150), "\x96\x01");  // the protobuf documentation's example
  EXPECT_EQ(varint(300), "\xAC\x02");
  EXPECT_EQ(varint(16384), std::string("\x80\x80\x01"));
  EXPECT_EQ(varint(~0ull), std::string(9, '\xFF') + "\x01");  // int64 -1: ten bytes
}

TEST(Protobuf, FieldsAsTheWireFormatSpecifies) {
  std::string out;
  tb::append_varint_field(out, 1, 150);
  EXPECT_EQ(out, "\x08\x96\x01");
  out.clear();
  tb::append_bytes_field(out, 2, "testing");
  EXPECT_EQ(out, "\x12\x07testing");
  out.clear();
  tb::append_double_field(out, 1, 1.0);
  EXPECT_EQ(out, from_hex("09000000000000f03f"));
  out.clear();
  tb::append_float_field(out, 2, 1.0f);
  EXPECT_EQ(out, from_hex("150000803f"));
}

TEST(Protobuf, EventsMatchTensorBoardsOwnSerialization) {
  EXPECT_EQ(tb::file_version_event(1.5), from_hex("09000000000000f83f1a0d627261696e2e4576656e743a32"));
  EXPECT_EQ(tb::scalars_event(1.5, 3, {{"a", 2.0f}}), from_hex("09000000000000f83f10032a0a0a080a01611500000040"));
  EXPECT_EQ(tb::scalars_event(1234.5, 300, {{"train/loss", -0.25f}, {"x", INFINITY}}),
            from_hex("0900000000004a934010ac022a1d0a110a0a747261696e2f6c6f737315000080be0a080a0178150000807f"));
}

TEST(TfRecord, FramingMatchesTensorBoardsRecordWriter) {
  EXPECT_EQ(tb::frame_record("abc"), from_hex("0300000000000000b099490e6162636e57f121"));
  EXPECT_EQ(tb::frame_record("123456789"), from_hex("090000000000000037f97139313233343536373839e5b08ac7"));
  EXPECT_EQ(tb::frame_record(""), from_hex("000000000000000029039807d8ea82a2"));
}

TEST(TfRecord, SplitStopsAtACutShortOrDamagedRecord) {
  const std::string a = tb::frame_record("first"), b = tb::frame_record("second");
  const std::string file = a + b;
  ASSERT_EQ(tb::split_records(file).size(), 2u);
  EXPECT_EQ(tb::record_data(tb::split_records(file)[1]), "second");
  for (size_t cut = 1; cut < b.size(); ++cut)  // every way a killed writer can cut the last record
    EXPECT_EQ(tb::split_records(file.substr(0, file.size() - cut)).size(), 1u) << cut;
  std::string damaged = file;
  damaged[a.size() + 14] ^= 1;  // a byte of b's data
  EXPECT_EQ(tb::split_records(damaged).size(), 1u);
  damaged = file;
  damaged[a.size() + 9] ^= 1;  // b's length CRC
  EXPECT_EQ(tb::split_records(damaged).size(), 1u);
}

TEST(TfRecord, ReadsBackStepAndFileVersion) {
  const auto scalars = tb::read_event_info(tb::scalars_event(2.0, 12345678901, {{"t", 1.0f}}));
  ASSERT_TRUE(scalars.has_value());
  EXPECT_EQ(scalars->step, 12345678901);
  EXPECT_FALSE(scalars->has_file_version);
  const auto version = tb::read_event_info(tb::file_version_event(2.0));
  ASSERT_TRUE(version.has_value());
  EXPECT_TRUE(version->has_file_version);
  EXPECT_FALSE(tb::read_event_info("\x12\x05" "ab").has_value());  // a length past the end
}

TEST(TensorBoardWriter, ResumeCutsBackToTheCheckpointAndAppends) {
  test::ScratchDir dir;
  fs::path file;
  {
    TensorBoardWriter writer(dir.path());
    file = writer.path();
    EXPECT_EQ(file.filename().string().rfind("events.out.tfevents.", 0), 0u) << file;
    for (int64_t step = 0; step < 6; ++step) writer.write(step, {{"train/loss", 1.0 / (step + 1)}});
  }
  EXPECT_EQ(test::event_steps(file), (std::vector<int64_t>{-1, 0, 1, 2, 3, 4, 5}));
  std::ofstream(file, std::ios::binary | std::ios::app) << tb::frame_record("killed").substr(0, 9);
  {
    TensorBoardWriter resumed(dir.path(), 2);  // resumed from the checkpoint at step 3
    EXPECT_EQ(resumed.path(), file);
    resumed.write(3, {{"train/loss", 0.5}});
  }
  EXPECT_EQ(test::event_steps(file), (std::vector<int64_t>{-1, 0, 1, 2, 3}));
  EXPECT_EQ(event_files(dir.path()), std::vector<fs::path>{file});
  {
    TensorBoardWriter from_start(dir.path(), -1);  // a checkpoint at step 0 keeps only the version
  }
  EXPECT_EQ(test::event_steps(file), (std::vector<int64_t>{-1}));
}

TEST(TensorBoardWriter, MetricsAndGradNormTags) {
  test::ScratchDir dir;
  TensorBoardWriter writer(dir.path());
  writer.write_metrics({{"step", 7}, {"train_loss", 2.5}, {"lr", 1e-3}, {"val_loss", nullptr}, {"diverged", "why"}});
  writer.write_grad_norms(7, {{"blocks.0.w", 3.0, LayerKey{0, 0}}, {"blocks.1.w", 4.0, LayerKey{0, 1}}, {"emb", 0.0, std::nullopt}},
                         {{"residual_rms.0", 1.25}});
  const std::string bytes = read_whole_file(writer.path().string(), "test");
  const auto records = tb::split_records(bytes);
  ASSERT_EQ(records.size(), 3u);
  // Keys in nlohmann's (sorted) order; NaN for null; the reason string left out.
  EXPECT_EQ(tb::record_data(records[1]).substr(9),
            tb::scalars_event(0, 7, {{"train/lr", 1e-3f}, {"train/loss", 2.5f}, {"val/loss", NAN}}).substr(9));
  EXPECT_EQ(tb::record_data(records[2]).substr(9),
            tb::scalars_event(0, 7, {{"grad_norm/blocks.0.w", 3.0f}, {"grad_norm/blocks.1.w", 4.0f},
                                     {"grad_norm/emb", 0.0f}, {"grad_norm/layer.0", 3.0f},
                                     {"grad_norm/layer.1", 4.0f}, {"grad_norm/global", 5.0f},
                                     {"residual_rms/0", 1.25f}})
                .substr(9));  // after the wall time (9 bytes)
}

}  // namespace
}  // namespace normlab
