// A 64-bit FNV-1a hash of a text, written as 16 hex digits: the fingerprint of a resolved config
// (config_fingerprint, config/config.h) and the suffix that keeps long sweep point names
// unique. It detects accidental differences; it is not meant to resist deliberate collisions.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace normlab {

inline uint64_t fnv1a_64(std::string_view text) {
  uint64_t hash = 1469598103934665603ull;
  for (const char ch : text) hash = (hash ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
  return hash;
}

inline std::string hex_fingerprint(std::string_view text) { return fmt::format("{:016x}", fnv1a_64(text)); }

}  // namespace normlab
