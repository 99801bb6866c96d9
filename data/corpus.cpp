// The built-in default corpus: the English fortune cookies of Debian's `fortunes` package
// (/usr/share/games/fortunes), so that a run needs no download and is identical everywhere the
// package is installed.
//  * Files: every regular file whose name has no extension, sorted by name (the .dat index files
//    are skipped, and so are the .u8 symlinks, which point at the same files; any other entry that
//    resolves to an already-read file is read once).
//  * Lines that are exactly "%" (the fortune separators) are removed; the files are joined.
//  * Characters: only printable ASCII (0x20-0x7E) and '\n' are kept, for a small, stable
//    vocabulary. A tab becomes one space (tabs indent attributions; dropping them would glue
//    words), a backspace erases the previous kept character (the files underline and embolden by
//    overstriking, "_\bX" -> "X"), everything else (bell, '\r', the ~40 non-ASCII characters,
//    mostly mis-encoded quotes) is dropped.
// Measured with Debian's fortunes + fortunes-min 1:1.99.1-7.3: 43 files, 2,576,674 bytes in;
// 2,545,472 characters out (about 2.5 MB), 96 distinct (all 95 printable ASCII and '\n').
#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/files.h"
#include "data/dataset.h"

namespace normlab {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFortuneDir = "/usr/share/games/fortunes";

// Appends `raw` to `out` keeping only the corpus characters (see the header comment).
void append_cleaned(const std::string& raw, std::string& out) {
  std::istringstream lines(raw);
  std::string line;
  while (std::getline(lines, line)) {
    if (line == "%") continue;
    for (const char c : line) {
      if (c >= 0x20 && c <= 0x7E) out += c;
      else if (c == '\t') out += ' ';
      else if (c == '\b' && !out.empty() && out.back() != '\n') out.pop_back();
    }
    out += '\n';
  }
}

}  // namespace

std::string default_corpus() {
  std::error_code ec;
  if (!fs::is_directory(kFortuneDir, ec)) {
    fail("data", "the default corpus needs Debian's 'fortunes' package (apt-get install fortunes); "
         "{} is missing", kFortuneDir);
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kFortuneDir)) {
    const fs::path& path = entry.path();
    if (path.has_extension() || !entry.is_regular_file()) continue;  // .dat/.u8, directories
    files.push_back(path);
  }
  std::sort(files.begin(), files.end());
  std::set<fs::path> seen;
  std::string corpus;
  for (const fs::path& path : files) {
    if (!seen.insert(fs::canonical(path)).second) continue;  // a link to a file already read
    append_cleaned(read_whole_file(path, "data"), corpus);
  }
  NL_CHECK(!corpus.empty(), "data", "the default corpus in {} is empty (is 'fortunes' fully installed?)",
           kFortuneDir);
  return corpus;
}

}  // namespace normlab
