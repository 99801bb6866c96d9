#include "io/fault_injection.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "core/error.h"

namespace normlab {
namespace {

enum class FaultKind { None, Kill, NoSpace, Trace };

struct FaultPlan {
  FaultKind kind = FaultKind::None;
  uint64_t at = 0;  // the 1-based step that faults
};

FaultPlan parse_plan(const char* text) {
  if (text == nullptr || *text == '\0') return {};
  const std::string_view value(text);
  if (value == "trace") return {FaultKind::Trace, 0};
  const size_t at = value.find('@');
  const std::string_view kind = value.substr(0, at);
  const std::string number(at == std::string_view::npos ? "" : value.substr(at + 1));
  char* end = nullptr;
  const unsigned long long n = std::strtoull(number.c_str(), &end, 10);
  const bool number_ok = !number.empty() && *end == '\0' && number[0] != '-' && n > 0;
  if ((kind == "kill" || kind == "enospc") && number_ok)
    return {kind == "kill" ? FaultKind::Kill : FaultKind::NoSpace, n};
  fail("fault_injection", "NORMLAB_FAULT_INJECT='{}' is not kill@N, enospc@N (N >= 1) or trace", value);
}

const FaultPlan& plan() {
  static const FaultPlan parsed = parse_plan(std::getenv("NORMLAB_FAULT_INJECT"));
  return parsed;
}

}  // namespace

bool inject_fault(const char* step, const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  const FaultPlan& p = plan();
  if (p.kind == FaultKind::None) return false;
  const uint64_t n = ++counter;
  if (p.kind == FaultKind::Trace) {
    fmt::print(stderr, "fault point {}: {} {}\n", n, step, path);
    return false;
  }
  if (n != p.at) return false;
  fmt::print(stderr, "fault injected at step {} ({} {})\n", n, step, path);
  if (p.kind == FaultKind::Kill) ::kill(::getpid(), SIGKILL);
  errno = ENOSPC;
  return true;
}

}  // namespace normlab

namespace normlab {

void inject_rank_fault(int rank, int64_t step) {
  static const char* plan = std::getenv("NORMLAB_FAULT_RANK");
  if (plan == nullptr || *plan == '\0') return;
  int fault_rank = -1;
  long long fault_step = -1;
  char extra = 0;
  NL_CHECK(std::sscanf(plan, "%d@%lld%c", &fault_rank, &fault_step, &extra) == 2 && fault_rank >= 0 &&
               fault_step >= 0,
           "fault_injection", "NORMLAB_FAULT_RANK='{}' is not RANK@STEP (two whole numbers >= 0)", plan);
  if (rank != fault_rank || step != fault_step) return;
  fmt::print(stderr, "fault injected: rank {} kills itself at step {}\n", rank, step);
  std::fflush(stderr);
  ::kill(::getpid(), SIGKILL);
}

}  // namespace normlab
