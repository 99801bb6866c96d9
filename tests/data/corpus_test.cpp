// The default corpus (Debian's fortunes), when the package is installed.
#include <gtest/gtest.h>

#include <filesystem>

#include "data/dataset.h"

namespace normlab {
namespace {

constexpr const char* kDir = "/usr/share/games/fortunes";

TEST(DefaultCorpus, LoadsNonTrivialPrintableAsciiText) {
  if (!std::filesystem::is_directory(kDir)) GTEST_SKIP() << kDir << " is missing (apt-get install fortunes)";
  const std::string corpus = default_corpus();
  EXPECT_GT(corpus.size(), 100000u);
  for (size_t i = 0; i < corpus.size(); ++i) {
    const char c = corpus[i];
    ASSERT_TRUE(c == '\n' || (c >= 0x20 && c <= 0x7E)) << "byte " << int(static_cast<unsigned char>(c)) << " at " << i;
  }
  EXPECT_EQ(corpus.find("\n%\n"), std::string::npos);  // separators removed
  EXPECT_NE(corpus.rfind("%\n", 0), 0u);
  EXPECT_EQ(default_corpus(), corpus);  // deterministic

  DataConfig c;  // "default", char tokenizer
  auto ds = make_dataset(c);
  EXPECT_GT(ds->vocab_size(), 60);
  EXPECT_LE(ds->vocab_size(), 96);
  Generator gen(1);
  EXPECT_EQ(ds->sample(true, 2, 64, gen).inputs.shape(), (Shape{2, 64}));
}

}  // namespace
}  // namespace normlab
