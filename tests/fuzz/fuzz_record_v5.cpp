// libFuzzer target: Xiong v5's committed record (xiong/v5/analysis_v5.h read_record_v5), then the
// whole analysis of it under the committed registration, on arbitrary bytes:
//   input = runs.csv NUL val_curves.csv [NUL init_profile.csv [NUL frozen_build.json]]
// (a file whose part is absent is not written). Every input must end in the claims' results or a
// normlab::Error: damaged cells, missing columns, NaN and huge numbers included.
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"
#include "fuzz_util.h"
#include "xiong/v5/analysis_v5.h"
#include "xiong/v5/registration_v5.h"

namespace {

using namespace normlab;
namespace fs = std::filesystem;

const xiong::RegistrationV5& registration() {
  static const xiong::RegistrationV5 reg = xiong::load_registration_v5(NORMLAB_SOURCE_DIR "/xiong/registration_v5.toml");
  return reg;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const fs::path dir = fuzz::scratch_path("record-v5");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::vector<const char*> files = {"runs.csv", "val_curves.csv", "init_profile.csv", "frozen_build.json"};
  size_t start = 0;
  for (size_t f = 0; f < files.size() && start <= text.size(); ++f) {
    const size_t nul = std::min(text.find('\0', start), text.size());
    fuzz::write_file((dir / files[f]).string(), data + start, nul - start);
    start = nul + 1;
  }
  try {
    xiong::RecordV5 record = xiong::read_record_v5(dir);
    xiong::classify_runs(registration(), "2026-12-06T03:42:35Z", record);
    (void)xiong::analyse_v5(registration(), record);
  } catch (const Error&) {
  }
  return 0;
}
