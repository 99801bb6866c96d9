// The bytes of a TensorBoard event file, written by hand (no TensorFlow, no protobuf library).
//
// An event file is a sequence of TFRecords, each
//   uint64 length | uint32 masked_crc32c(length bytes) | data | uint32 masked_crc32c(data)
// (little-endian), where data is one serialized Event protobuf. Of tensorflow/core/util/event.proto
// and summary.proto we need only:
//   Event   { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
//   Summary { repeated Value value = 1; }
//   Value   { string tag = 1; float simple_value = 2; }
// and the protobuf wire format: a field is a varint key (field_number << 3 | wire_type) followed by
// a varint (type 0), 8 little-endian bytes (type 1, double), a varint length and the bytes (type 2,
// strings and messages) or 4 little-endian bytes (type 5, float). The first record of a file is an
// Event with file_version "brain.Event:2".
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace normlab::tensorboard {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): crc32c("123456789") == 0xE3069283.
uint32_t crc32c(std::string_view bytes);
// The form TFRecord stores: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
uint32_t masked_crc32c(std::string_view bytes);

// --- protobuf wire format ---
void append_varint(std::string& out, uint64_t value);  // 7 bits a byte, low first, high bit = more
void append_varint_field(std::string& out, int field, uint64_t value);
void append_double_field(std::string& out, int field, double value);  // fixed64
void append_float_field(std::string& out, int field, float value);    // fixed32
void append_bytes_field(std::string& out, int field, std::string_view bytes);  // strings, messages

// --- the messages ---
inline constexpr const char* kFileVersion = "brain.Event:2";
std::string file_version_event(double wall_time);
// An Event with a Summary of one simple_value per (tag, value), all at one step.
std::string scalars_event(double wall_time, int64_t step, const std::vector<std::pair<std::string, float>>& values);

// --- TFRecord framing ---
std::string frame_record(std::string_view data);

// Reading back what we wrote (to cut a resumed run's file back to its checkpoint).
struct EventInfo {
  int64_t step = 0;
  bool has_file_version = false;
};
// The step and file_version presence of a serialized Event; nullopt if it does not parse.
std::optional<EventInfo> read_event_info(std::string_view event);
// The records of an event file's bytes, each as its complete framed bytes, in order. Reading stops
// at the first record that is cut short or fails a CRC (what a killed writer leaves at the end).
std::vector<std::string_view> split_records(std::string_view file_bytes);
// The data of one framed record (as returned by split_records).
std::string_view record_data(std::string_view record);

}  // namespace normlab::tensorboard
