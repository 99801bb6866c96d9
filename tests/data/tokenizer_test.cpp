// Byte and char tokenizers: round trips (multi-byte UTF-8 included), unknown characters, and the
// saved JSON form.
#include <gtest/gtest.h>

#include "data/dataset.h"
#include "data_test_util.h"

namespace normlab {
namespace {

using test::error_of;

// 'h' 'é'(2 bytes) 'l' 'l' 'o' ',' ' ' 'м' 'и' 'р'(2 each) ' ' '🙂'(4 bytes): 12 code points, 19 bytes.
const std::string kText = "h\xC3\xA9llo, \xD0\xBC\xD0\xB8\xD1\x80 \xF0\x9F\x99\x82";

TEST(ByteTokenizer, RoundTripsRawBytes) {
  auto tok = make_tokenizer("byte", "");
  EXPECT_EQ(tok->kind(), "byte");
  EXPECT_EQ(tok->vocab_size(), 256);
  const auto ids = tok->encode(kText);
  ASSERT_EQ(ids.size(), 19u);
  EXPECT_EQ(ids[0], 'h');
  EXPECT_EQ(ids[1], 0xC3);
  EXPECT_EQ(tok->decode(ids), kText);
  EXPECT_THROW(tok->decode({256}), Error);
}

TEST(CharTokenizer, OneIdPerCodePointSortedVocabulary) {
  auto tok = make_tokenizer("char", kText);
  EXPECT_EQ(tok->kind(), "char");
  // distinct: h é l o , space м и р 🙂 -> 10
  EXPECT_EQ(tok->vocab_size(), 10);
  const auto ids = tok->encode(kText);
  ASSERT_EQ(ids.size(), 12u);
  EXPECT_EQ(ids[2], ids[3]);  // "ll"
  EXPECT_EQ(ids[6], ids[10]);  // both spaces
  EXPECT_EQ(ids[6], 0);       // ' ' is the smallest code point
  EXPECT_EQ(ids[11], 9);      // U+1F642 the largest
  EXPECT_LT(ids[0], ids[1]);  // 'h' < 'é'
  EXPECT_EQ(tok->decode(ids), kText);
  EXPECT_EQ(tok->decode(tok->encode("\xD0\xBC\xD0\xB8\xD1\x80")), "\xD0\xBC\xD0\xB8\xD1\x80");
}

TEST(CharTokenizer, UnknownCharacterNamesItAndItsPosition) {
  auto tok = make_tokenizer("char", "abc");
  const std::string msg = error_of([&] { tok->encode("abz"); });
  EXPECT_NE(msg.find("[tokenizer]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'z' (U+007A)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("position 2"), std::string::npos) << msg;
  const std::string multi = error_of([&] { tok->encode("a\xC3\xA9"); });
  EXPECT_NE(multi.find("U+00E9"), std::string::npos) << multi;
  EXPECT_NE(multi.find("position 1"), std::string::npos) << multi;
  EXPECT_THROW(tok->decode({3}), Error);
}

TEST(CharTokenizer, RejectsInvalidUtf8AndUnknownKinds) {
  EXPECT_THROW(make_tokenizer("char", "ab\xC3"), Error);         // truncated
  EXPECT_THROW(make_tokenizer("char", "\xC0\xAF"), Error);       // overlong '/'
  EXPECT_THROW(make_tokenizer("char", "\xED\xA0\x80"), Error);   // surrogate
  EXPECT_THROW(make_tokenizer("char", ""), Error);
  const std::string msg = error_of([] { make_tokenizer("bpe", "abc"); });
  EXPECT_NE(msg.find("'bpe'"), std::string::npos) << msg;
}

TEST(TokenizerJson, RoundTrips) {
  for (const char* kind : {"char", "byte"}) {
    auto tok = make_tokenizer(kind, kText);
    auto loaded = load_tokenizer(tok->to_json());
    EXPECT_EQ(loaded->kind(), kind);
    EXPECT_EQ(loaded->vocab_size(), tok->vocab_size());
    EXPECT_EQ(loaded->encode(kText), tok->encode(kText));
    EXPECT_EQ(loaded->to_json(), tok->to_json());
  }
}

TEST(TokenizerJson, ReadsHandWrittenJsonAndRejectsBadJson) {
  // Whitespace, key order, extra keys with escapes: all fine.
  auto tok = load_tokenizer(
      "{ \"code_points\" : [ 97 , 98, 1084 ],\n \"note\": \"q\\\"\\u00e9\\ud83d\\ude42\", \"kind\":\"char\" }");
  EXPECT_EQ(tok->vocab_size(), 3);
  EXPECT_EQ(tok->encode("ab\xD0\xBC"), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_THROW(load_tokenizer("{\"kind\": \"char\", \"code_points\": [98, 97]}"), Error);  // unsorted
  EXPECT_THROW(load_tokenizer("{\"kind\": \"char\", \"code_points\": [97,]}"), Error);
  EXPECT_THROW(load_tokenizer("{\"kind\": \"char\"}"), Error);
  EXPECT_THROW(load_tokenizer("{\"kind\": \"wordpiece\"}"), Error);
  EXPECT_THROW(load_tokenizer("{\"kind\": \"byte\"} trailing"), Error);
  EXPECT_THROW(load_tokenizer("[1, 2]"), Error);
  // A number past double's range (found by tests/fuzz/fuzz_tokenizer_json: nlohmann's out_of_range
  // escaped as another exception type, ending the process).
  EXPECT_THROW(load_tokenizer("{\"kind\": \"byte\", \"x\": -35E33333}"), Error);
}

}  // namespace
}  // namespace normlab
