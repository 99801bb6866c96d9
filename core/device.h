// Where a tensor's storage lives. The backend for a device is chosen in backend.h.
#pragma once
#include <string>

namespace normlab {

enum class DeviceKind : unsigned char { CPU, CUDA };

struct Device {
  DeviceKind kind = DeviceKind::CPU;
  int index = 0;

  static Device cpu() { return {DeviceKind::CPU, 0}; }
  static Device cuda(int i = 0) { return {DeviceKind::CUDA, i}; }
  bool operator==(const Device&) const = default;
  std::string str() const { return kind == DeviceKind::CPU ? "cpu" : "cuda:" + std::to_string(index); }
};

// Parses "cpu", "cuda", "cuda:1"; throws [device] on anything else.
Device parse_device(const std::string& text);

}  // namespace normlab
