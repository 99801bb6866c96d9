// Strict UTF-8 decoding and encoding (see utf8.h).
#include "data/utf8.h"

#include "core/error.h"

namespace normlab::utf8 {

namespace {

// Decodes one code point at text[i]; returns its byte length, or 0 when the sequence is invalid.
int decode_one(const std::string& text, size_t i, char32_t& cp) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  int len;
  char32_t min;
  if (b0 < 0x80) { cp = b0; return 1; }
  if ((b0 & 0xE0) == 0xC0) { len = 2; cp = b0 & 0x1F; min = 0x80; }
  else if ((b0 & 0xF0) == 0xE0) { len = 3; cp = b0 & 0x0F; min = 0x800; }
  else if ((b0 & 0xF8) == 0xF0) { len = 4; cp = b0 & 0x07; min = 0x10000; }
  else return 0;  // a continuation byte or 0xF8..0xFF where a sequence should start
  if (i + len > text.size()) return 0;  // truncated
  for (int k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;  // overlong/out of range/surrogate
  return len;
}

}  // namespace

int64_t first_invalid(const std::string& text) {
  char32_t cp;
  for (size_t i = 0; i < text.size();) {
    const int len = decode_one(text, i, cp);
    if (len == 0) return static_cast<int64_t>(i);
    i += len;
  }
  return -1;
}

std::vector<char32_t> decode(const std::string& text, const std::string& who, const std::string& source) {
  std::vector<char32_t> out;
  out.reserve(text.size());
  char32_t cp;
  for (size_t i = 0; i < text.size();) {
    const int len = decode_one(text, i, cp);
    if (len == 0) {
      fail(who, "{} is not valid UTF-8: bad byte 0x{:02X} at byte offset {}", source,
           static_cast<unsigned char>(text[i]), i);
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string describe(char32_t cp) {
  const std::string code = fmt::format("U+{:04X}", static_cast<uint32_t>(cp));
  if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0)) return code;
  std::string ch;
  append(ch, cp);
  return fmt::format("'{}' ({})", ch, code);
}

}  // namespace normlab::utf8
