// UTF-8 <-> code points, strict (RFC 3629: no overlong forms, no surrogates, nothing above
// U+10FFFF), shared by the char tokenizer and the file loader. Internal to data/.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace normlab::utf8 {

// The code points of `text`; throws "[<who>] <source> is not valid UTF-8: ... at byte offset N".
std::vector<char32_t> decode(const std::string& text, const std::string& who, const std::string& source);
// Byte offset of the first invalid sequence, or -1 when the text is valid UTF-8.
int64_t first_invalid(const std::string& text);
void append(std::string& out, char32_t cp);
// "'a' (U+0061)", or "U+000A" for control characters: for error messages.
std::string describe(char32_t cp);

}  // namespace normlab::utf8
