// The word-by-word baseline (data/translation_baselines.h) on a corpus small enough to count by hand.
#include <gtest/gtest.h>

#include "data/translation_baselines.h"
#include "data_test_util.h"

namespace normlab {
namespace {

const std::vector<std::string> kSources = {"el gato", "el gato negro", "un perro", "el perro"};
const std::vector<std::string> kTargets = {"the cat", "the black cat", "a dog", "the dog"};

TEST(WordByWord, DiceChoosesTheWordThatGoesWithTheSourceWord) {
  // gato: c(gato) = 2; "cat" co-occurs twice, c(cat) = 2: Dice 1; "the" twice, c(the) = 3: 0.8.
  const WordByWord dice(kSources, kTargets, WordChoice::Dice);
  EXPECT_EQ(dice.translate("el gato"), "the cat");
  EXPECT_EQ(dice.translate("un perro negro"), "a dog black");
  // Looked up lowercased; a word never seen is copied; punctuation is a word of its own.
  EXPECT_EQ(dice.translate("El Perro, Fido."), "the dog , Fido .");
}

TEST(WordByWord, MostFrequentPicksTheCommonestCoOccurringWord) {
  // gato: "the" and "cat" both co-occur twice; the tie goes to the word seen first, "the".
  const WordByWord frequent(kSources, kTargets, WordChoice::MostFrequent);
  EXPECT_EQ(frequent.translate("gato"), "the");
  EXPECT_EQ(frequent.translate("perro"), "dog");  // dog 2, the 1, a 1
  EXPECT_EQ(frequent.translate("el"), "the");     // the 3
}

TEST(WordByWord, MismatchedInputsAreAnError) {
  EXPECT_NE(test::error_of([] { WordByWord({"a"}, {}, WordChoice::Dice); }).find("as many sources as targets"),
            std::string::npos);
}

}  // namespace
}  // namespace normlab
