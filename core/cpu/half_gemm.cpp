// The choice between oneDNN and the float32 fallback for half GEMMs, and the fallback itself.
#include "core/cpu/half_gemm.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/cpu/env_choice.h"
#include "core/random.h"

namespace normlab {

namespace {

std::atomic<HalfGemmPath>& requested_path() {
  // NORMLAB_HALF_GEMM = auto | onednn | fallback (unset: auto).
  static std::atomic<HalfGemmPath> path{choice_from_environment(
      "NORMLAB_HALF_GEMM", {HalfGemmPath::Auto, HalfGemmPath::OneDnn, HalfGemmPath::Fallback}, half_gemm_path_name)};
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

// The wall-clock seconds of one call.
template <typename Gemm> double seconds_of(Gemm gemm) {
  const auto t0 = std::chrono::steady_clock::now();
  gemm();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Auto's probe: the three GEMMs of one Linear layer (in K, out N) over M rows, at a transformer's
// size: forward Y = X W^T, dX = dY W, dW = dY^T X. A smaller probe misleads: oneDNN's per-call
// overhead weighs so much at 256^3 that it understates oneDNN's speed on the models' own shapes
// (bench/gemm_precision; the figures in bench/README.md).
constexpr int64_t kProbeRows = 1024, kProbeIn = 512, kProbeOut = 512;

// Fallback time / oneDNN time over the probe's three GEMMs, each the best of kProbeReps timings
// taken in turn (oneDNN, fallback, oneDNN, ...) after one untimed call of each (oneDNN builds its
// kernel on the first), so that a slow moment of the machine hits both paths alike.
constexpr int kProbeReps = 5;
double measure_speedup(DType dtype) {
  Generator gen(7);
  double onednn_seconds = 0.0, fallback_seconds = 0.0;
  for (const LinearGemm which : {LinearGemm::Forward, LinearGemm::InputGrad, LinearGemm::WeightGrad}) {
    GemmOperands p = random_linear_gemm(which, kProbeRows, kProbeIn, kProbeOut, dtype, gen);
    const auto onednn = [&] { onednn_gemm(p.args, p.a, p.b, p.c); };
    const auto fallback = [&] { gemm_half_fallback(p.args, p.a, p.b, p.c); };
    onednn();
    fallback();
    double best_onednn = 1e30, best_fallback = 1e30;
    for (int r = 0; r < kProbeReps; ++r) {
      best_onednn = std::min(best_onednn, seconds_of(onednn));
      best_fallback = std::min(best_fallback, seconds_of(fallback));
    }
    onednn_seconds += best_onednn;
    fallback_seconds += best_fallback;
  }
  return fallback_seconds / onednn_seconds;
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

GemmOperands random_linear_gemm(LinearGemm which, int64_t rows, int64_t in, int64_t out, DType dtype,
                                Generator& gen) {
  GemmOperands o;
  Shape a_shape, b_shape;
  if (which == LinearGemm::Forward) {  // Y = X W^T: (M,K)(N,K)^T
    a_shape = {rows, in}, b_shape = {out, in};
    o.args.trans_b = true, o.args.m = rows, o.args.n = out, o.args.k = in;
  } else if (which == LinearGemm::InputGrad) {  // dX = dY W: (M,N)(N,K)
    a_shape = {rows, out}, b_shape = {out, in};
    o.args.m = rows, o.args.n = in, o.args.k = out;
  } else {  // dW = dY^T X: (M,N)^T (M,K)
    a_shape = {rows, out}, b_shape = {rows, in};
    o.args.trans_a = true, o.args.m = out, o.args.n = in, o.args.k = rows;
  }
  o.a = Tensor::randn(a_shape, gen, 0.0, 1.0, DType::F32).to(dtype);
  o.b = Tensor::randn(b_shape, gen, 0.0, 1.0, DType::F32).to(dtype);
  o.c = Tensor::zeros({o.args.m, o.args.n}, dtype);
  return o;
}

void set_half_gemm_path(HalfGemmPath path) { requested_path() = path; }

std::string half_gemm_description(DType dtype) {
  const HalfGemmPath path = half_gemm_path(dtype);
  std::string text(half_gemm_path_name(path));
  if (requested_path() != HalfGemmPath::Auto) return text + " (NORMLAB_HALF_GEMM)";
  const AutoChoice& choice = auto_choice(dtype);
  if (choice.measured)
    return text + fmt::format(" (oneDNN measured {:.2f}x the float32 fallback on a {}x{} Linear over {} rows, "
                              "forward and backward; taken at >= {:.2f}x)",
                              choice.speedup, kProbeIn, kProbeOut, kProbeRows, kAutoMargin);
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
