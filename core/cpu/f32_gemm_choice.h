// Auto's float32 kernel choice (core/cpu/f32_gemm.h): the probe that measures it and the file
// that keeps it per machine, apart from the process-wide state so that tests can drive them.
#pragma once
#include <filesystem>
#include <functional>
#include <string>

#include "core/cpu/f32_gemm.h"

namespace normlab {

struct F32GemmChoice {
  // Per class (GemmClass's order: tiny, small, large): the kernel, and OpenBLAS time / oneDNN time
  // on the class's probe (0: not measured).
  F32GemmKernel kernel[3] = {F32GemmKernel::OpenBlas, F32GemmKernel::OpenBlas, F32GemmKernel::OpenBlas};
  double speedup[3] = {0.0, 0.0, 0.0};
  std::string measured_at;                          // UTC, ISO 8601
  std::string file;                                 // where it is kept ("" when not kept)
  std::string note;                                 // why it was not measured or not kept
  // The probe thread's CPU time over its wall time: below kMinProbeCpuShare other work held its
  // core, and the timings are not kept (not written to the file).
  double probe_cpu_share = 1.0;
};

inline constexpr double kMinProbeCpuShare = 0.9;

// The probe: both kernels on one thread, on each class's products (Large: one Linear layer's
// forward and backward at 1024 rows, 512 in, 512 out; Small: attention's products at 256
// positions and head size 64 over 8 heads; Tiny: the same at 64 positions and head size 32 over
// 48 heads), each product the best of several tries,
// kernels alternated, in two rounds. oneDNN is taken per class when the smaller of the two
// rounds' ratios is >= kF32AutoMargin. About 0.6 s, once per machine.
F32GemmChoice measure_f32_gemm_choice();

// The probe's clock: the CPU seconds of the calling thread alone (another thread's work is not
// counted, so a neighbour spinning on the same core shows as a share below 1).
double probe_thread_cpu_seconds();

// "f32-gemm-<16 hex digits>.txt": a hash of what the choice depends on (the CPU's model name and
// flags, OpenBLAS's core and this probe's version).
std::string f32_choice_file_name();

// Why the machine is too busy to measure on ("" when it is not): its 1-minute load average is at
// least a quarter of its hardware threads (other processes would share the probe's core, cache and
// memory bandwidth, as a build did when a busy probe kept OpenBLAS for products oneDNN runs 2.2x
// faster).
std::string busy_machine_reason();

// The choice kept in `file` when it holds a well-formed one. Else, on a busy machine
// (busy_reason() not ""), OpenBLAS for every class, neither measured nor kept, with a note; a
// later process on an idle machine measures. Else measure(), written to `file` (through a
// temporary file linked into place, so a reader never sees half a file) unless the probe lost its
// core (probe_cpu_share < kMinProbeCpuShare: then OpenBLAS, not kept, as when busy). When another
// process wrote `file` in the meantime, its choice is adopted, so all processes agree. A file
// that cannot be written leaves the measured choice, with a note saying why.
F32GemmChoice kept_or_measured_choice(const std::filesystem::path& file, const std::function<F32GemmChoice()>& measure,
                                      const std::function<std::string()>& busy_reason);

// The file's text and back; parse returns false for anything malformed.
std::string format_f32_choice(const F32GemmChoice& choice);
bool parse_f32_choice(const std::string& text, F32GemmChoice& choice);

// "large onednn (1.07x), small onednn (1.05x), tiny openblas (0.92x); measured 2026-12-05T01:59:00Z, kept in FILE;
// oneDNN taken at >= 1.04x"
std::string describe_f32_choice(const F32GemmChoice& choice);

}  // namespace normlab
