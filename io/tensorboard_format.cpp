#include "io/tensorboard_format.h"

#include <array>
#include <cstring>

namespace normlab::tensorboard {
namespace {

enum WireType : uint64_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Event, Summary and Summary.Value field numbers (event.proto, summary.proto).
constexpr int kEventWallTime = 1, kEventStep = 2, kEventFileVersion = 3, kEventSummary = 5;
constexpr int kSummaryValue = 1;
constexpr int kValueTag = 1, kValueSimpleValue = 2;

// The byte-at-a-time table of the reflected CRC-32C: entry b is the CRC of the single byte b.
std::array<uint32_t, 256> make_crc32c_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? 0x82F63B78u : 0u);
    table[b] = crc;
  }
  return table;
}

void append_little_endian(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFFu);
}

uint64_t read_little_endian(std::string_view bytes, int count) {
  uint64_t value = 0;
  for (int i = 0; i < count; ++i) value |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  return value;
}

void append_key(std::string& out, int field, WireType type) {
  append_varint(out, (static_cast<uint64_t>(field) << 3) | type);
}

// Reads a varint at bytes[pos], advancing pos; false if it runs past the end or over 10 bytes.
bool read_varint(std::string_view bytes, size_t& pos, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && pos < bytes.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(bytes[pos++]);
    value |= static_cast<uint64_t>(byte & 0x7Fu) << shift;
    if (!(byte & 0x80u)) return true;
  }
  return false;
}

constexpr size_t kHeaderBytes = 8 + 4, kFooterBytes = 4;  // length + its CRC; the data's CRC

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = make_crc32c_table();
  uint32_t crc = 0xFFFFFFFFu;
  for (const char ch : bytes) crc = (crc >> 8) ^ table[(crc ^ static_cast<unsigned char>(ch)) & 0xFFu];
  return crc ^ 0xFFFFFFFFu;
}

uint32_t masked_crc32c(std::string_view bytes) {
  const uint32_t crc = crc32c(bytes);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

void append_varint(std::string& out, uint64_t value) {
  while (value >= 0x80u) {
    out += static_cast<char>((value & 0x7Fu) | 0x80u);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void append_varint_field(std::string& out, int field, uint64_t value) {
  append_key(out, field, kVarint);
  append_varint(out, value);
}

void append_double_field(std::string& out, int field, double value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  append_key(out, field, kFixed64);
  append_little_endian(out, bits, 8);
}

void append_float_field(std::string& out, int field, float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  append_key(out, field, kFixed32);
  append_little_endian(out, bits, 4);
}

void append_bytes_field(std::string& out, int field, std::string_view bytes) {
  append_key(out, field, kLengthDelimited);
  append_varint(out, bytes.size());
  out += bytes;
}

std::string file_version_event(double wall_time) {
  std::string event;
  append_double_field(event, kEventWallTime, wall_time);
  append_bytes_field(event, kEventFileVersion, kFileVersion);
  return event;
}

std::string scalars_event(double wall_time, int64_t step, const std::vector<std::pair<std::string, float>>& values) {
  std::string summary;
  for (const auto& [tag, value] : values) {
    std::string item;
    append_bytes_field(item, kValueTag, tag);
    append_float_field(item, kValueSimpleValue, value);
    append_bytes_field(summary, kSummaryValue, item);
  }
  std::string event;
  append_double_field(event, kEventWallTime, wall_time);
  append_varint_field(event, kEventStep, static_cast<uint64_t>(step));  // int64: two's complement
  append_bytes_field(event, kEventSummary, summary);
  return event;
}

std::string frame_record(std::string_view data) {
  std::string length;
  append_little_endian(length, data.size(), 8);
  std::string record = length;
  append_little_endian(record, masked_crc32c(length), 4);
  record += data;
  append_little_endian(record, masked_crc32c(data), 4);
  return record;
}

std::optional<EventInfo> read_event_info(std::string_view event) {
  EventInfo info;
  size_t pos = 0;
  while (pos < event.size()) {
    uint64_t key = 0, value = 0;
    if (!read_varint(event, pos, key)) return std::nullopt;
    const uint64_t field = key >> 3;
    switch (key & 7u) {
      case kVarint:
        if (!read_varint(event, pos, value)) return std::nullopt;
        if (field == kEventStep) info.step = static_cast<int64_t>(value);
        break;
      case kFixed64: pos += 8; break;
      case kFixed32: pos += 4; break;
      case kLengthDelimited:
        if (!read_varint(event, pos, value) || value > event.size() - pos) return std::nullopt;
        if (field == kEventFileVersion) info.has_file_version = true;
        pos += value;
        break;
      default: return std::nullopt;
    }
    if (pos > event.size()) return std::nullopt;
  }
  return info;
}

std::vector<std::string_view> split_records(std::string_view file_bytes) {
  std::vector<std::string_view> records;
  size_t pos = 0;
  while (file_bytes.size() - pos >= kHeaderBytes) {
    const std::string_view length_bytes = file_bytes.substr(pos, 8);
    if (read_little_endian(file_bytes.substr(pos + 8), 4) != masked_crc32c(length_bytes)) break;
    const uint64_t length = read_little_endian(length_bytes, 8);
    const size_t after_header = file_bytes.size() - pos - kHeaderBytes;
    if (length > after_header || after_header - length < kFooterBytes) break;  // cut short
    const std::string_view data = file_bytes.substr(pos + kHeaderBytes, length);
    if (read_little_endian(file_bytes.substr(pos + kHeaderBytes + length), 4) != masked_crc32c(data)) break;
    records.push_back(file_bytes.substr(pos, kHeaderBytes + length + kFooterBytes));
    pos += kHeaderBytes + length + kFooterBytes;
  }
  return records;
}

std::string_view record_data(std::string_view record) {
  return record.substr(kHeaderBytes, record.size() - kHeaderBytes - kFooterBytes);
}

}  // namespace normlab::tensorboard
