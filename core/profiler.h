// A cheap per-op-family profiler: wall time spent in the ops of each family, for `normlab bench`.
//
//   profiler_reset(); profiler_enable(true);
//   ... train steps ...
//   ProfileTotals t = profiler_totals();   // seconds and calls per OpFamily
//
// Ops open a `ProfileScope scope(OpFamily::Norm);` at their top. When profiling is off (the
// default) a scope costs one branch on a global bool. When on, only the OUTERMOST scope of a
// thread times anything: an op that calls other ops (an optimizer step that scales gradients, a
// norm that reduces) is charged once, to its own family, so totals never double count.
// Scopes live in core/ops.cpp, core/norm_ops.cpp, autograd/ops/matmul.cpp and the optimizers.
// Time not inside any scope (the tape, copies, embedding, the loss) is the caller's "other".
#pragma once
#include <array>
#include <cstdint>

namespace normlab {

enum class OpFamily { Gemm, Attention, Norm, Elementwise, Optimizer, Other };
inline constexpr int kOpFamilyCount = 6;

// "gemm", "attention", "norm", "elementwise", "optimizer", "other"
const char* op_family_name(OpFamily family);

struct ProfileTotals {
  std::array<double, kOpFamilyCount> seconds{};
  std::array<int64_t, kOpFamilyCount> calls{};
  double seconds_of(OpFamily f) const { return seconds[static_cast<int>(f)]; }
  int64_t calls_of(OpFamily f) const { return calls[static_cast<int>(f)]; }
  double total_seconds() const;
};

void profiler_enable(bool on);
bool profiler_enabled();
void profiler_reset();             // zeroes every total
ProfileTotals profiler_totals();   // the totals of all threads since the last reset

namespace profiler_detail {
inline bool g_enabled = false;  // read by every ProfileScope: the whole cost when disabled
}  // namespace profiler_detail

class ProfileScope {
 public:
  explicit ProfileScope(OpFamily family) {
    if (profiler_detail::g_enabled) begin(family);
  }
  ~ProfileScope() {
    if (entered_) end();
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  void begin(OpFamily family);
  void end();
  bool entered_ = false;  // this scope incremented the thread's nesting depth
  bool timing_ = false;   // this scope is the outermost one and measures
  OpFamily family_ = OpFamily::Other;
  int64_t start_ns_ = 0;
};

}  // namespace normlab
