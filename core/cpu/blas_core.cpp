#include "core/cpu/blas_core.h"

#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>

namespace normlab {

std::string blas_core_name() {
  const char* name = openblas_get_corename();
  return name != nullptr ? name : "unknown";
}

namespace {

// Cores OpenBLAS uses for an x86 CPU it does not recognise, or for old ones (no AVX2).
bool is_generic_core(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  static const std::array<const char*, 8> generic = {"prescott", "core2",   "penryn", "dunnington",
                                                     "nehalem",  "katmai",  "atom",   "sandybridge"};
  return std::find(generic.begin(), generic.end(), name) != generic.end();
}

}  // namespace

std::optional<std::string> better_blas_core() {
#if defined(__x86_64__)
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr || !is_generic_core(blas_core_name())) return std::nullopt;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return std::nullopt;
}

void restart_with_better_blas_core(char** argv) {
  const std::optional<std::string> core = better_blas_core();
  if (!core) return;
  if (setenv("OPENBLAS_CORETYPE", core->c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  unsetenv("OPENBLAS_CORETYPE");  // exec failed: carry on with the kernels we have
}

}  // namespace normlab
