#include "core/profiler.h"

#include <atomic>
#include <chrono>

namespace normlab {

namespace {

std::array<std::atomic<int64_t>, kOpFamilyCount> g_nanoseconds{};
std::array<std::atomic<int64_t>, kOpFamilyCount> g_calls{};
thread_local int t_depth = 0;  // open scopes on this thread

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

const char* op_family_name(OpFamily family) {
  switch (family) {
    case OpFamily::Gemm: return "gemm";
    case OpFamily::Attention: return "attention";
    case OpFamily::Norm: return "norm";
    case OpFamily::Elementwise: return "elementwise";
    case OpFamily::Optimizer: return "optimizer";
    case OpFamily::Other: return "other";
  }
  return "?";
}

double ProfileTotals::total_seconds() const {
  double sum = 0.0;
  for (double s : seconds) sum += s;
  return sum;
}

void profiler_enable(bool on) { profiler_detail::g_enabled = on; }
bool profiler_enabled() { return profiler_detail::g_enabled; }

void profiler_reset() {
  for (int i = 0; i < kOpFamilyCount; ++i) {
    g_nanoseconds[i].store(0, std::memory_order_relaxed);
    g_calls[i].store(0, std::memory_order_relaxed);
  }
}

ProfileTotals profiler_totals() {
  ProfileTotals totals;
  for (int i = 0; i < kOpFamilyCount; ++i) {
    totals.seconds[i] = static_cast<double>(g_nanoseconds[i].load(std::memory_order_relaxed)) * 1e-9;
    totals.calls[i] = g_calls[i].load(std::memory_order_relaxed);
  }
  return totals;
}

void ProfileScope::begin(OpFamily family) {
  entered_ = true;
  if (t_depth++ == 0) {
    timing_ = true;
    family_ = family;
    start_ns_ = now_ns();
  }
}

void ProfileScope::end() {
  --t_depth;
  if (!timing_) return;
  const int i = static_cast<int>(family_);
  g_nanoseconds[i].fetch_add(now_ns() - start_ns_, std::memory_order_relaxed);
  g_calls[i].fetch_add(1, std::memory_order_relaxed);
}

}  // namespace normlab
