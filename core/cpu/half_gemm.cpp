// The choice between oneDNN and the float32 fallback for half GEMMs, and the fallback itself.
#include "core/cpu/half_gemm.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/random.h"

namespace normlab {

namespace {

// NORMLAB_HALF_GEMM = auto | onednn | fallback (unset: auto).
HalfGemmPath path_from_environment() {
  const char* value = std::getenv("NORMLAB_HALF_GEMM");
  const std::string text = value ? value : "auto";
  for (const HalfGemmPath path : {HalfGemmPath::Auto, HalfGemmPath::OneDnn, HalfGemmPath::Fallback})
    if (text == half_gemm_path_name(path)) return path;
  fail("gemm", "NORMLAB_HALF_GEMM must be auto, onednn or fallback, got '{}'", text);
}

std::atomic<HalfGemmPath>& requested_path() {
  static std::atomic<HalfGemmPath> path{path_from_environment()};
  return path;
}

// Through float32: A, B and C converted whole (their layout, strides and broadcasts unchanged),
// one sgemm call per batch entry, C rounded back.
void gemm_half_fallback(const GemmArgs& g, const Tensor& a, const Tensor& b, Tensor& c) {
  const Tensor a32 = a.to(DType::F32), b32 = b.to(DType::F32);
  Tensor c32 = g.beta != 0.0 ? c.to(DType::F32) : Tensor::zeros(c.shape(), DType::F32);
  cpu_backend().gemm(g, a32, b32, c32);
  cpu_backend().copy_strided(c32, c);
}

// The best of `reps` timings of one GEMM, in seconds.
template <typename Gemm> double best_seconds(int reps, Gemm gemm) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    gemm();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

// Auto's measurement for a dtype oneDNN can run: a kProbe^3 GEMM, best of 5 each way after one
// untimed call of each (oneDNN builds its kernel on the first).
constexpr int64_t kProbe = 256;
double measure_speedup(DType dtype) {
  Generator gen(7);
  const Tensor a = Tensor::randn({kProbe, kProbe}, gen, 0.0, 1.0, DType::F32).to(dtype);
  const Tensor b = Tensor::randn({kProbe, kProbe}, gen, 0.0, 1.0, DType::F32).to(dtype);
  Tensor c = Tensor::zeros({kProbe, kProbe}, dtype);
  GemmArgs g;
  g.m = g.n = g.k = kProbe;
  g.stride_a = g.stride_b = g.stride_c = 0;
  const auto onednn = [&] { onednn_gemm(g, a, b, c); };
  const auto fallback = [&] { gemm_half_fallback(g, a, b, c); };
  onednn();
  fallback();
  return best_seconds(5, fallback) / best_seconds(5, onednn);
}

struct AutoChoice {
  bool measured = false;
  double speedup = NAN;  // fallback time / oneDNN time on the probe (NaN: not measured)
  HalfGemmPath path = HalfGemmPath::Fallback;
};

AutoChoice decide(DType dtype) {
  AutoChoice choice;
  if (onednn_gemm_preferred(dtype)) {  // AMX: oneDNN's tiles, no need to measure
    choice.path = HalfGemmPath::OneDnn;
  } else if (onednn_gemm_available(dtype)) {
    choice.measured = true;
    choice.speedup = measure_speedup(dtype);
    choice.path = choice.speedup >= kAutoMargin ? HalfGemmPath::OneDnn : HalfGemmPath::Fallback;
  }
  return choice;
}

// Made once per dtype and process (thread-safe static initialisation), then kept: the same run
// never switches paths, and a GEMM reads the choice without a lock.
const AutoChoice& auto_choice(DType dtype) {
  static const AutoChoice bf16 = decide(DType::BF16);
  static const AutoChoice f16 = decide(DType::F16);
  NL_CHECK(dtype == DType::BF16 || dtype == DType::F16, "gemm", "no half GEMM for {}", dtype_name(dtype));
  return dtype == DType::BF16 ? bf16 : f16;
}

}  // namespace

void set_half_gemm_path(HalfGemmPath path) { requested_path() = path; }

std::string half_gemm_description(DType dtype) {
  const HalfGemmPath path = half_gemm_path(dtype);
  std::string text(half_gemm_path_name(path));
  if (requested_path() != HalfGemmPath::Auto) return text + " (NORMLAB_HALF_GEMM)";
  const AutoChoice& choice = auto_choice(dtype);
  if (choice.measured)
    return text + fmt::format(" (oneDNN measured {:.2f}x the float32 fallback on a {}^3 GEMM; taken at >= {:.2f}x)",
                              choice.speedup, kProbe, kAutoMargin);
  return text + (path == HalfGemmPath::OneDnn ? " (AMX)" : " (oneDNN has no native kernel here)");
}

HalfGemmPath half_gemm_path(DType dtype) {
  const HalfGemmPath path = requested_path();
  if (path == HalfGemmPath::Auto) return auto_choice(dtype).path;
  NL_CHECK(path == HalfGemmPath::Fallback || onednn_gemm_available(dtype), "gemm",
           "oneDNN was asked for but cannot run {} GEMMs here (built without oneDNN, or no native "
           "kernel on this CPU)", dtype_name(dtype));
  return path;
}

std::string_view half_gemm_path_name(HalfGemmPath path) {
  switch (path) {
    case HalfGemmPath::Auto: return "auto";
    case HalfGemmPath::OneDnn: return "onednn";
    case HalfGemmPath::Fallback: return "fallback";
  }
  return "?";
}

void gemm_half(const GemmArgs& g, const Tensor& a, const Tensor& b, Tensor& c) {
  NL_CHECK(a.dtype() == c.dtype() && b.dtype() == c.dtype(), "gemm",
           "operands must share one dtype, got a {}, b {}, c {}", dtype_name(a.dtype()),
           dtype_name(b.dtype()), dtype_name(c.dtype()));
  if (g.m == 0 || g.n == 0 || g.batch == 0) return;
  if (g.k > 0 && half_gemm_path(c.dtype()) == HalfGemmPath::OneDnn)
    onednn_gemm(g, a, b, c);
  else
    gemm_half_fallback(g, a, b, c);
}

}  // namespace normlab
