// The plain text of one verse of a SWORD module stored as OSIS XML (what libsword's getRawEntry()
// returns), as a translation corpus wants it:
//   * <note>...</note> (footnotes, cross-references) dropped with everything inside; where the
//     note stood between two letters or digits ("God<note>..</note>created") one space stays;
//   * <title> kept only when canonical="true" (a psalm's superscription, which the Spanish text
//     carries as part of verse 1), other titles (section headings) dropped with their text;
//   * the end of a book (<div type="book" eID=".."/>) ends the verse: what a module appends there
//     (the WEB's glossary after Revelation 22:21) is no part of it;
//   * every other element (<w lemma="strong:H7225">, <transChange>, <divineName>, <q>, <l>, <lg>,
//     milestones) dropped, its text kept: Strong's numbers live only in attributes, so they go too;
//     line-like elements (<l>, <lg>, <lb>, <p>, <div>, <milestone>) leave a space;
//   * the five XML entities decoded (&amp; &lt; &gt; &quot; &apos;);
//   * Unicode NFC (utf8proc), every run of white space (Unicode category Zs, tab, newline) one
//     space, none at either end.
// Invalid UTF-8 or an unterminated tag is an error naming `where` (e.g. "spaRV1909eb Gen.1.1").
#pragma once
#include <string>
#include <string_view>

namespace normlab {

std::string osis_to_plain(std::string_view raw, const std::string& where);

// Unicode NFC of valid UTF-8 `text`, white space collapsed as above (no markup handling).
std::string normalize_text(std::string_view text, const std::string& where);

}  // namespace normlab
