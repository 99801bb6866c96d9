// Digests of bytes, the one place for each: a file's byte count and CRC-32 (zlib's, the
// polynomial of gzip and PNG) for manifests that let a reader detect a damaged file, and a 64-bit
// FNV-1a hash of a text (config fingerprints, sweep point names, the corpus split rule). Both detect
// accidental differences; neither is meant to resist deliberate collisions.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace normlab {

struct FileDigest {
  uint64_t bytes = 0;
  uint32_t crc32 = 0;
};
FileDigest digest_of(std::string_view bytes);
// The CRC-32 of a stream so far (`crc`: 0 at the start) extended by `bytes` more bytes.
uint32_t crc32_update(uint32_t crc, const void* data, size_t bytes);
// "89abcdef": the CRC-32 as 8 lowercase hex digits, as manifests write it.
std::string crc32_hex(uint32_t crc);

inline uint64_t fnv1a_64(std::string_view text) {
  uint64_t hash = 1469598103934665603ull;
  for (const char ch : text) hash = (hash ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
  return hash;
}

}  // namespace normlab
