// Recursive-descent JSON reader and string quoting (see json_lite.h).
#include "data/json_lite.h"

#include <cstdlib>

#include "core/error.h"
#include "data/utf8.h"

namespace normlab::json_lite {

const Value* Value::find(const std::string& key) const {
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

namespace {

class Parser {
 public:
  Parser(const std::string& text, const std::string& who) : s_(text), who_(who) {}

  Value parse_document() {
    Value v = parse_value(0);
    skip_ws();
    if (i_ != s_.size()) error("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void error(const std::string& what) {
    fail(who_, "invalid JSON at byte offset {}: {}", i_, what);
  }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  void expect(char c) {
    skip_ws();
    if (i_ >= s_.size() || s_[i_] != c) error(fmt::format("expected '{}'", c));
    ++i_;
  }
  bool consume(char c) {
    skip_ws();
    if (i_ < s_.size() && s_[i_] == c) { ++i_; return true; }
    return false;
  }

  Value parse_value(int depth) {
    if (depth > 64) error("nested too deeply");
    skip_ws();
    if (i_ >= s_.size()) error("unexpected end of text");
    Value v;
    const char c = s_[i_];
    if (c == '{') {
      v.kind = Value::Kind::Object;
      ++i_;
      if (consume('}')) return v;
      do {
        skip_ws();
        std::string key = parse_string();
        expect(':');
        v.members.push_back({std::move(key), parse_value(depth + 1)});
      } while (consume(','));
      expect('}');
    } else if (c == '[') {
      v.kind = Value::Kind::Array;
      ++i_;
      if (consume(']')) return v;
      do v.items.push_back(parse_value(depth + 1));
      while (consume(','));
      expect(']');
    } else if (c == '"') {
      v.kind = Value::Kind::String;
      v.string = parse_string();
    } else if (literal("true")) {
      v.kind = Value::Kind::Bool;
      v.boolean = true;
    } else if (literal("false")) {
      v.kind = Value::Kind::Bool;
    } else if (literal("null")) {
      v.kind = Value::Kind::Null;
    } else {
      v.kind = Value::Kind::Number;
      v.number = parse_number();
    }
    return v;
  }

  bool literal(const char* word) {
    const std::string w(word);
    if (s_.compare(i_, w.size(), w) != 0) return false;
    i_ += w.size();
    return true;
  }

  double parse_number() {
    const size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    while (i_ < s_.size() && std::string_view("0123456789.eE+-").find(s_[i_]) != std::string_view::npos) ++i_;
    const std::string token = s_.substr(start, i_ - start);
    char* end = nullptr;
    const double value = token.empty() ? 0.0 : std::strtod(token.c_str(), &end);
    if (token.empty() || end != token.c_str() + token.size()) {
      i_ = start;
      error("expected a value");
    }
    return value;
  }

  uint32_t parse_hex4() {
    if (i_ + 4 > s_.size()) error("truncated \\u escape");
    uint32_t value = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = s_[i_++];
      value <<= 4;
      if (h >= '0' && h <= '9') value |= h - '0';
      else if (h >= 'a' && h <= 'f') value |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F') value |= h - 'A' + 10;
      else error("bad hex digit in \\u escape");
    }
    return value;
  }

  std::string parse_string() {
    if (i_ >= s_.size() || s_[i_] != '"') error("expected a string");
    ++i_;
    std::string out;
    while (true) {
      if (i_ >= s_.size()) error("unterminated string");
      const char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) error("control character inside a string");
      if (c != '\\') { out += c; continue; }
      if (i_ >= s_.size()) error("unterminated escape");
      const char e = s_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = parse_hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {  // high surrogate: a low one must follow
            if (!literal("\\u")) error("unpaired surrogate in \\u escape");
            const uint32_t low = parse_hex4();
            if (low < 0xDC00 || low > 0xDFFF) error("unpaired surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            error("unpaired surrogate in \\u escape");
          }
          utf8::append(out, cp);
          break;
        }
        default: error(fmt::format("unknown escape '\\{}'", e));
      }
    }
  }

  const std::string& s_;
  const std::string& who_;
  size_t i_ = 0;
};

}  // namespace

Value parse(const std::string& text, const std::string& who) { return Parser(text, who).parse_document(); }

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<int>(c));
        else out += c;
    }
  }
  return out + "\"";
}

}  // namespace normlab::json_lite
