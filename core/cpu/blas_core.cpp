#include "core/cpu/blas_core.h"

#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <initializer_list>

namespace normlab {

std::string blas_core_name() {
  const char* name = openblas_get_corename();
  return name != nullptr ? name : "unknown";
}

namespace {

std::string lower(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name;
}

bool is_one_of(const std::string& name, std::initializer_list<const char*> cores) {
  return std::any_of(cores.begin(), cores.end(), [&](const char* core) { return lower(name) == core; });
}

// Cores OpenBLAS uses for an x86 CPU it does not recognise, or for old ones (no AVX2).
bool is_generic_core(const std::string& name) {
  return is_one_of(name, {"prescott", "core2", "penryn", "dunnington", "nehalem", "katmai", "atom", "sandybridge"});
}

bool is_avx512_core(const std::string& name) {
  return is_one_of(name, {"skylakex", "cooperlake", "sapphirerapids"});
}

}  // namespace

BlasIsa cpu_blas_isa() {
  BlasIsa isa;
#if defined(__x86_64__)
  __builtin_cpu_init();
  isa.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vl");
  isa.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
  return isa;
}

bool blas_runs_avx512_kernels() { return cpu_blas_isa().avx512 && is_avx512_core(blas_core_name()); }

std::optional<std::string> better_blas_core_for(const std::string& chosen, BlasIsa isa) {
  if (is_avx512_core(chosen)) return std::nullopt;
  if (isa.avx512) return "SkylakeX";
  if (isa.avx2_fma && is_generic_core(chosen)) return "Haswell";
  return std::nullopt;
}

std::optional<std::string> better_blas_core() {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return std::nullopt;
  return better_blas_core_for(blas_core_name(), cpu_blas_isa());
}

std::string blas_core_description() {
  const std::string name = blas_core_name();
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  if (forced == nullptr) return name;
  const std::optional<std::string> better = better_blas_core_for(forced, cpu_blas_isa());
  if (!better) return name;
  return name + " (OPENBLAS_CORETYPE=" + forced + " from the environment; this CPU can run " + *better + "'s kernels)";
}

void restart_with_better_blas_core(char** argv) {
  const std::optional<std::string> core = better_blas_core();
  if (!core) return;
  if (setenv("OPENBLAS_CORETYPE", core->c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  unsetenv("OPENBLAS_CORETYPE");  // exec failed: carry on with the kernels we have
}

}  // namespace normlab
