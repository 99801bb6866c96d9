// Reading Bibles installed as SWORD modules (Debian's sword-text-* packages) with libsword.
#pragma once
#include <string>
#include <vector>

#include "data/bible_corpus.h"

namespace normlab {

struct SwordModuleInfo {
  std::string name, role, package, version, versification, language;
};

// The Debian package that ships a known module ("spaRV1909eb" -> "sword-text-sparv"), or "".
std::string sword_package_of(const std::string& module);

struct BibleTexts {
  std::vector<VerseText> source, target, second;  // each in the source's verse order
  std::vector<SwordModuleInfo> modules;           // source, target, second
};

// Every verse of `source` (intros and headings excluded), and for each the verse of `target` and
// `second` at the same reference, which libsword maps into their own versifications (the WEB is
// NRSVA, Reina-Valera and KJV are KJV); a target verse that an earlier source verse already took
// (a mapping that merges verses) is left out, so no target text appears twice. Texts go through
// osis_to_plain. A module that is not installed is an error naming its Debian package.
BibleTexts read_sword_bibles(const std::string& source, const std::string& target, const std::string& second);

}  // namespace normlab
