// Byte counts for people, in binary units: "512 B", "1.5 KiB", "12.0 MiB", "3.2 GiB", "2.0 EiB".
#pragma once
#include <fmt/format.h>

#include <string>

namespace normlab {

inline std::string format_bytes(double bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 7) {
    bytes /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, units[u]);
}

}  // namespace normlab
