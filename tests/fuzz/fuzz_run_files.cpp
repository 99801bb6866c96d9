// libFuzzer target: readers of files a run or a study leaves behind, on arbitrary bytes:
//   input = <selector byte> <text>
//   selector % 3 == 0: RUN/provenance.json (train/provenance.h read_sittings); one that reads is
//                      written back with a sitting appended (record_sitting) and must read again
//                      with one more entry;
//   selector % 3 == 1: a record's val_curves_runs.csv, then after a NUL its val_curves.csv
//                      (xiong/run_record.h), marked legacy;
//   selector % 3 == 2: the same record without legacy.txt (every row needs a fingerprint).
// Every input must end in a result or a normlab::Error.
#include <filesystem>
#include <string>

#include "core/error.h"
#include "fuzz_util.h"
#include "train/provenance.h"
#include "xiong/run_record.h"

namespace {

using namespace normlab;
namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& tag) {
  const fs::path dir = fuzz::scratch_path(tag);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write_text(const fs::path& path, const std::string& text) {
  fuzz::write_file(path.string(), reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

void fuzz_provenance(const std::string& text) {
  const fs::path dir = fresh_dir("provenance");
  write_text(dir / "provenance.json", text);
  try {
    const size_t before = read_sittings(dir).size();
    record_sitting(dir, current_sitting(0));
    if (read_sittings(dir).size() != before + 1)
      fuzz::property_failed("record_sitting did not add one sitting", text);
  } catch (const Error&) {
  }
}

void fuzz_record(const std::string& text, bool legacy) {
  const fs::path dir = fresh_dir("record");
  const size_t nul = text.find('\0');
  write_text(dir / xiong::kRecordRuns, text.substr(0, nul));
  write_text(dir / xiong::kRecordCurves, nul == std::string::npos ? "" : text.substr(nul + 1));
  if (legacy) write_text(dir / xiong::kRecordLegacy, "fuzz\n");
  try {
    (void)xiong::read_training_record(dir, "copy", {}, {});
  } catch (const Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 3 == 0) fuzz_provenance(text);
  else fuzz_record(text, data[0] % 3 == 1);
  return 0;
}
