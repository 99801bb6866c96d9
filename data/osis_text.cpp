#include "data/osis_text.h"

#include <utf8proc.h>

#include <array>
#include <cstdlib>
#include <memory>

#include "core/error.h"
#include "data/utf8.h"

namespace normlab {

namespace {

constexpr const char* kOp = "bible";

struct Tag {
  std::string name;   // "note", "w", ...; without the '/' of an end tag
  bool end = false;   // </name>
  bool empty = false; // <name ... />
  bool canonical = false;
  bool ends_book = false;  // <div type="book" eID=".."/>: what follows is back matter (the WEB's glossary)
  size_t after = 0;   // index just past '>'
};

// The tag starting at raw[at] == '<'.
Tag read_tag(std::string_view raw, size_t at, const std::string& where) {
  const size_t close = raw.find('>', at);
  NL_CHECK(close != std::string_view::npos, kOp, "{}: a tag opened at byte {} is never closed", where, at);
  std::string_view body = raw.substr(at + 1, close - at - 1);
  Tag tag;
  tag.after = close + 1;
  if (!body.empty() && body.front() == '/') {
    tag.end = true;
    body.remove_prefix(1);
  }
  if (!body.empty() && body.back() == '/') {
    tag.empty = true;
    body.remove_suffix(1);
  }
  const size_t name_end = body.find_first_of(" \t\n\r");
  tag.name = std::string(body.substr(0, name_end));
  tag.canonical = body.find("canonical=\"true\"") != std::string_view::npos;
  tag.ends_book = tag.name == "div" && body.find("type=\"book\"") != std::string_view::npos &&
                  body.find("eID=") != std::string_view::npos;
  return tag;
}

bool leaves_space(const std::string& name) {
  static const std::array<const char*, 6> kLineLike = {"l", "lg", "lb", "p", "div", "milestone"};
  for (const char* line_like : kLineLike)
    if (name == line_like) return true;
  return false;
}

bool is_word_byte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x80 || (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z');
}

// Index just past the element that starts with `open` (its matching end tag, same name, nested
// elements of that name counted).
size_t skip_element(std::string_view raw, const Tag& open, const std::string& where) {
  if (open.empty) return open.after;
  int depth = 1;
  size_t at = open.after;
  while (depth > 0) {
    at = raw.find('<', at);
    NL_CHECK(at != std::string_view::npos, kOp, "{}: <{}> is never closed", where, open.name);
    const Tag tag = read_tag(raw, at, where);
    if (tag.name == open.name && !tag.empty) depth += tag.end ? -1 : 1;
    at = tag.after;
  }
  return at;
}

// "&amp;" etc. at raw[at]; appends the character and returns the index past the entity, or
// appends '&' and returns at + 1 when it is none of the five.
size_t decode_entity(std::string_view raw, size_t at, std::string& out) {
  static const std::array<std::pair<const char*, char>, 5> kEntities = {
      {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}}};
  for (const auto& [name, ch] : kEntities) {
    const std::string_view entity(name);
    if (raw.substr(at, entity.size()) == entity) {
      out += ch;
      return at + entity.size();
    }
  }
  out += '&';
  return at + 1;
}

}  // namespace

std::string osis_to_plain(std::string_view raw, const std::string& where) {
  std::string out;
  // Set where a dropped element followed a letter or digit: a space goes in if the next text
  // (after any tags) starts with one too.
  bool after_dropped_word = false;
  size_t at = 0;
  while (at < raw.size()) {
    if (raw[at] != '<') {
      if (after_dropped_word && is_word_byte(raw[at])) out += ' ';
      after_dropped_word = false;
      if (raw[at] == '&') at = decode_entity(raw, at, out);
      else out += raw[at++];
      continue;
    }
    const Tag tag = read_tag(raw, at, where);
    if (tag.ends_book) break;
    const bool dropped = !tag.end && (tag.name == "note" || (tag.name == "title" && !tag.canonical));
    if (dropped) {
      after_dropped_word = after_dropped_word || (!out.empty() && is_word_byte(out.back()));
      at = skip_element(raw, tag, where);
      continue;
    }
    if (leaves_space(tag.name) || tag.name == "title") out += ' ';
    at = tag.after;
  }
  return normalize_text(out, where);
}

std::string normalize_text(std::string_view text, const std::string& where) {
  const std::string input(text);
  const int64_t bad = utf8::first_invalid(input);
  NL_CHECK(bad < 0, kOp, "{}: not valid UTF-8 at byte {}", where, bad);
  const std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> nfc(
      utf8proc_NFC(reinterpret_cast<const utf8proc_uint8_t*>(input.c_str())), &std::free);
  NL_CHECK(nfc != nullptr, kOp, "{}: utf8proc could not normalize the text to NFC", where);
  std::string out;
  bool pending_space = false;
  for (const char32_t cp : utf8::decode(reinterpret_cast<const char*>(nfc.get()), kOp, where)) {
    const bool space = cp == '\t' || cp == '\n' || cp == '\r' ||
                       utf8proc_category(static_cast<utf8proc_int32_t>(cp)) == UTF8PROC_CATEGORY_ZS;
    if (space) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    utf8::append(out, cp);
  }
  return out;
}

}  // namespace normlab
