// OSIS verse markup to plain text (data/osis_text.h): Strong's numbers, notes, titles, entities,
// NFC and white space, on raw entries shaped like the SWORD modules' own.
#include <gtest/gtest.h>

#include "data/osis_text.h"
#include "data_test_util.h"

namespace normlab {
namespace {

using test::error_of;

TEST(OsisText, DropsStrongsNumbersAndKeepsTheWords) {
  const std::string raw = R"(<w lemma="strong:H7225">EN el principio</w> <w lemma="strong:H1254">crió</w> )"
                          R"(<w lemma="strong:H0430">Dios</w> <w lemma="strong:H8064">los cielos</w>.)";
  EXPECT_EQ(osis_to_plain(raw, "t"), "EN el principio crió Dios los cielos.");
}

TEST(OsisText, ANoteBetweenWordsLeavesOneSpaceAndBeforePunctuationNone) {
  // The World English Bible's Genesis 1:1: the footnote sits between "God" and "created".
  const std::string raw = R"(<w lemma="strong:H7225">beginning</w><note placement="foot"><reference )"
                          R"(type="annotateRef">1:1 </reference>The word “God”.</note>, )"
                          R"(<w lemma="strong:H0430">God</w><note placement="foot">Elohim.</note>)"
                          R"(<w lemma="strong:H1254">created</w>.)";
  EXPECT_EQ(osis_to_plain(raw, "t"), "beginning, God created.");
}

TEST(OsisText, KeepsCanonicalTitlesOnlyAndLineElementsSeparateWords) {
  const std::string raw = R"(<title type="section">A heading</title><title canonical="true" type="psalm">A )"
                          R"(Psalm by David.</title><lg sID="g1"/><l level="1" sID="g2"/>Yahweh, how many!)"
                          R"(<l eID="g2"/><l sID="g3"/>Many<lb/>rise.<l eID="g3"/>)";
  EXPECT_EQ(osis_to_plain(raw, "t"), "A Psalm by David. Yahweh, how many! Many rise.");
}

TEST(OsisText, DecodesEntitiesAndNormalizesToNfcAndSpaces) {
  // "e" + U+0301 (combining acute) is "é" (U+00E9) in NFC; NBSP and EM SPACE are white space.
  const std::string raw = "  Tom &amp; Jerry &lt;3 &quot;ok&quot; &apos;caf" "e\xCC\x81" "\xC2\xA0" "x\xE2\x80\x83y\n";
  EXPECT_EQ(osis_to_plain(raw, "t"), "Tom & Jerry <3 \"ok\" 'caf\xC3\xA9 x y");
  EXPECT_EQ(osis_to_plain("a &bogus; b", "t"), "a &bogus; b");
}

TEST(OsisText, TheEndOfABookEndsTheVerse) {
  // The WEB's Revelation 22:21 carries the Bible's glossary after the book's end.
  const std::string raw = R"(<w lemma="strong:G3956">The</w> grace be with all. Amen. <chapter eID="Rev.22"/>)"
                          R"(<div canonical="true" eID="gen1" osisID="Rev" type="book"/> <div sID="g2" )"
                          R"(type="glossary"/> The following words used in the World English Bible)";
  EXPECT_EQ(osis_to_plain(raw, "t"), "The grace be with all. Amen.");
  // A book's start (sID) is no end.
  EXPECT_EQ(osis_to_plain(R"(<div osisID="Gen" sID="g0" type="book"/>In the beginning)", "t"), "In the beginning");
}

TEST(OsisText, NestedNotesAreSkippedWhole) {
  EXPECT_EQ(osis_to_plain("a<note>x<note>y</note>z</note> b", "t"), "a b");
}

TEST(OsisText, BadMarkupAndBadUtf8AreErrorsNamingTheVerse) {
  EXPECT_NE(error_of([] { osis_to_plain("a <w lemma", "spaRV1909eb Gen.1.1"); }).find("spaRV1909eb Gen.1.1"),
            std::string::npos);
  EXPECT_NE(error_of([] { osis_to_plain("a <note>never closed", "engWEB2015eb Gen.1.2"); })
                .find("engWEB2015eb Gen.1.2: <note> is never closed"),
            std::string::npos);
  EXPECT_NE(error_of([] { osis_to_plain("a \xFF b", "kjv Ps.1.1"); }).find("kjv Ps.1.1: not valid UTF-8"),
            std::string::npos);
}

}  // namespace
}  // namespace normlab
