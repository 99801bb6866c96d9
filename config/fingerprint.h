// A 64-bit FNV-1a hash of a text, written as 16 hex digits: the fingerprint of a resolved config
// (config_fingerprint, config/config.h) and the suffix that keeps long sweep point names
// unique. It detects accidental differences; it is not meant to resist deliberate collisions.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "core/digest.h"  // fnv1a_64

namespace normlab {

inline std::string hex_fingerprint(std::string_view text) { return fmt::format("{:016x}", fnv1a_64(text)); }

}  // namespace normlab
