// A very small JSON reader/writer for the tokenizer files, so that data/ depends on core only.
// Reads any well-formed JSON value (objects, arrays, strings with escapes including \uXXXX
// surrogate pairs, numbers, true/false/null); errors name the byte offset. Internal to data/.
#pragma once
#include <string>
#include <vector>

namespace normlab::json_lite {

struct Member;

struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
  bool boolean = false;
  double number = 0.0;
  std::string string;
  std::vector<Value> items;                            // Array
  std::vector<Member> members;                         // Object, in file order

  const Value* find(const std::string& key) const;  // Object member, or null
};

// A named struct rather than std::pair<std::string, Value>: a pair of the still incomplete Value
// inside Value's own definition does not compile with clang and libstdc++.
struct Member {
  std::string key;
  Value value;
};

// Parses one JSON value filling the whole text (whitespace aside); `who` prefixes errors.
Value parse(const std::string& text, const std::string& who);
// `s` as a JSON string literal, quotes included.
std::string quote(const std::string& s);

}  // namespace normlab::json_lite
