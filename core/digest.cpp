#include "core/digest.h"

#include <zlib.h>

#include <fmt/format.h>

namespace normlab {

uint32_t crc32_update(uint32_t crc, const void* data, size_t bytes) {
  return static_cast<uint32_t>(::crc32_z(crc, static_cast<const Bytef*>(data), bytes));
}

FileDigest digest_of(std::string_view bytes) { return {bytes.size(), crc32_update(0, bytes.data(), bytes.size())}; }

std::string crc32_hex(uint32_t crc) { return fmt::format("{:08x}", crc); }

}  // namespace normlab
