// A run's status, the one vocabulary of the trainer (summary.json), sweeps (sweep.csv) and the
// suites that read them:
//   completed  trained every step;                 diverged  stopped at a step that diverged (a result);
//   stopped    stopped early on purpose (resumable); failed    the process failed (sweeps: see its log);
//   interrupted  stopped by SIGINT or SIGTERM after a complete step, checkpointed (resumable);
//   pending    a sweep point not run yet;          missing   no summary.json (never run).
// Files hold the names; code compares the enum.
#pragma once
#include <ostream>

#include "core/named_enum.h"

namespace normlab {

enum class RunStatus { Completed, Diverged, Stopped, Interrupted, Failed, Pending, Missing };

template <> struct EnumNames<RunStatus> {
  static constexpr std::array<NamedValue<RunStatus>, 7> values{{{RunStatus::Completed, "completed"},
                                                                 {RunStatus::Diverged, "diverged"},
                                                                 {RunStatus::Stopped, "stopped"},
                                                                 {RunStatus::Interrupted, "interrupted"},
                                                                 {RunStatus::Failed, "failed"},
                                                                 {RunStatus::Pending, "pending"},
                                                                 {RunStatus::Missing, "missing"}}};
};

// A run that has a result: completed, or diverged (divergence is a result, not a failure).
inline bool has_result(RunStatus s) { return s == RunStatus::Completed || s == RunStatus::Diverged; }

// A run that stopped before its last step and can be continued with `normlab train --resume`.
inline bool is_resumable(RunStatus s) { return s == RunStatus::Stopped || s == RunStatus::Interrupted; }

inline std::ostream& operator<<(std::ostream& out, RunStatus s) { return out << enum_name(s); }

}  // namespace normlab
