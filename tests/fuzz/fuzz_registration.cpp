// libFuzzer target: the study registrations, on arbitrary bytes:
//   input = <selector byte> <TOML text>
//   selector even: xiong/registration.h load_registration (v4's xiong/registration.toml);
//   selector odd:  xiong/v5/registration_v5.h load_registration_v5 (xiong/registration_v5.toml).
// Every input must end in a Registration or a normlab::Error; one that reads is read again from
// the same file and must give the same claims and seeds (the reader keeps no state).
#include <string>

#include "core/error.h"
#include "fuzz_util.h"
#include "xiong/registration.h"
#include "xiong/v5/registration_v5.h"

namespace {

using namespace normlab;

void fuzz_v4(const std::string& path, const std::string& text) {
  try {
    const xiong::Registration a = xiong::load_registration(path);
    const xiong::Registration b = xiong::load_registration(path);
    if (a.claims.size() != b.claims.size() || a.confirmatory_seeds != b.confirmatory_seeds)
      fuzz::property_failed("load_registration read one file two ways", text);
  } catch (const Error&) {
  }
}

void fuzz_v5(const std::string& path, const std::string& text) {
  try {
    const xiong::RegistrationV5 a = xiong::load_registration_v5(path);
    const xiong::RegistrationV5 b = xiong::load_registration_v5(path);
    if (a.claims.size() != b.claims.size() || a.confirmatory_seeds != b.confirmatory_seeds)
      fuzz::property_failed("load_registration_v5 read one file two ways", text);
  } catch (const Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string path = fuzz::scratch_path("registration.toml");
  fuzz::write_file(path, data + 1, size - 1);
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) fuzz_v4(path, text);
  else fuzz_v5(path, text);
  return 0;
}
