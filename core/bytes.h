// Byte counts for people, in binary units: "512 B", "1.5 KiB", "12.0 MiB", "3.2 GiB", "2.0 EiB";
// past the largest unit in scientific notation, "1.15e+18 ZiB".
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
  if (u == 0) return fmt::format("{:.0f} B", bytes);
  if (bytes >= 1024.0) return fmt::format("{:.3g} {}", bytes, units[u]);  // past the largest unit: 1.15e+18 ZiB
  return fmt::format("{:.1f} {}", bytes, units[u]);
}

}  // namespace normlab
