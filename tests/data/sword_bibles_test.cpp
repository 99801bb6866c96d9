// The corpus from the SWORD modules Debian ships (scripts/setup.sh installs sword-text-sparv,
// -web and -kjv): known verses come out as plain text, aligned by reference across two
// versifications, and the splits follow the manifest's rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "data/sword_modules.h"
#include "data/translation_corpus.h"
#include "data_test_util.h"

namespace normlab {
namespace {

using test::error_of;

const BibleTexts& bibles() {
  static const BibleTexts texts = read_sword_bibles("spaRV1909eb", "engWEB2015eb", "engKJV2006eb");
  return texts;
}

const VerseText& verse_at(const std::vector<VerseText>& verses, const std::string& ref) {
  const auto it = std::find_if(verses.begin(), verses.end(), [&](const VerseText& v) { return v.ref == ref; });
  EXPECT_NE(it, verses.end()) << ref;
  return *it;
}

TEST(SwordBibles, KnownVersesArePlainText) {
  const BibleTexts& texts = bibles();
  EXPECT_EQ(verse_at(texts.source, "Gen.1.1").text, "EN el principio crió Dios los cielos y la tierra.");
  EXPECT_EQ(verse_at(texts.target, "Gen.1.1").text, "In the beginning, God created the heavens and the earth.");
  EXPECT_EQ(verse_at(texts.second, "Gen.1.1").text, "In the beginning God created the heaven and the earth.");
  // A psalm's superscription is verse 1 in Reina-Valera and a canonical title in the WEB and KJV.
  EXPECT_EQ(verse_at(texts.target, "Ps.3.1").text.rfind("A Psalm by David, when he fled from Absalom his son. ", 0),
            0u);
  EXPECT_EQ(verse_at(texts.source, "Ps.3.1").text.rfind("Salmo de David, cuando huía", 0), 0u);
  // Poetry spread over several lines is one line of text.
  EXPECT_EQ(verse_at(texts.target, "Ps.23.1").text, "A Psalm by David. Yahweh is my shepherd; I shall lack nothing.");
  ASSERT_EQ(texts.modules.size(), 3u);
  EXPECT_EQ(texts.modules[1].versification, "NRSVA");
  EXPECT_EQ(texts.modules[0].package, "sword-text-sparv");
}

TEST(SwordBibles, NoMarkupNumbersOrRepeatedTargetsRemain) {
  const std::regex strongs("[<>]|\\b[HG][0-9]{3,4}\\b|  ");
  for (const auto* verses : {&bibles().source, &bibles().target, &bibles().second})
    for (const VerseText& v : *verses) ASSERT_FALSE(std::regex_search(v.text, strongs)) << v.ref << ": " << v.text;
  EXPECT_EQ(bibles().source.size(), 31102u);  // Genesis 1:1 .. Revelation 22:21
  // Revelation 22:21 ends at the book's end (the WEB appends its glossary there).
  EXPECT_EQ(verse_at(bibles().target, "Rev.22.21").text, "The grace of the Lord Jesus Christ be with all the saints. Amen.");
}

TEST(SwordBibles, TheCorpusFollowsTheRule) {
  AlignmentCounts counts;
  const auto aligned = align_verses(bibles().source, bibles().target, bibles().second, counts);
  EXPECT_GT(counts.aligned, 30500);
  // Reina-Valera keeps the Spanish verse numbers in a few chapters (Numbers 13:1 is the KJV's
  // 12:16; Jonah 2:1 its 1:17): those are found and dropped.
  const std::vector<std::string> shifted = shifted_chapters(aligned, SplitRule{}.shift_margin);
  for (const char* chapter : {"Num.13", "Jonah.2", "1Sam.24"})
    EXPECT_NE(std::find(shifted.begin(), shifted.end(), chapter), shifted.end()) << chapter;
  EXPECT_LT(shifted.size(), 20u);
  const CorpusSplits splits = split_corpus(without_chapters(aligned, shifted), SplitRule{});
  const double total = static_cast<double>(counts.aligned);
  EXPECT_GT(splits.test.size() / total, 0.02);
  EXPECT_LT(splits.test.size() / total, 0.05);
  EXPECT_NEAR(splits.valid.size() / total, 0.03, 0.005);
  EXPECT_FALSE(splits.near_duplicates.empty());
  for (const std::string& pair : splits.near_duplicates) {  // "held-out ~ partner": the rule's share holds
    const std::string held = pair.substr(0, pair.find(' ')), partner = pair.substr(pair.rfind(' ') + 1);
    const auto text = [&](const std::string& ref) {
      return std::find_if(aligned.begin(), aligned.end(), [&](const AlignedVerse& v) { return v.ref == ref; })->target;
    };
    EXPECT_GT(shared_4gram_share(text(held), text(partner)), 0.5) << pair;
  }
}

TEST(SwordBibles, AMissingModuleNamesItsPackage) {
  EXPECT_NE(error_of([] { read_sword_bibles("spaRV1909eb", "engNoSuch", "engKJV2006eb"); })
                .find("the SWORD module engNoSuch is not installed"),
            std::string::npos);
  EXPECT_EQ(sword_package_of("engWEB2015eb"), "sword-text-web");
}

}  // namespace
}  // namespace normlab
