// The choice between oneDNN and the float32 fallback for half GEMMs, and the fallback itself.
#include "core/cpu/half_gemm.h"

#include <atomic>
#include <cstdlib>
#include <string>

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

}  // namespace

void set_half_gemm_path(HalfGemmPath path) { requested_path() = path; }

HalfGemmPath half_gemm_path(DType dtype) {
  const HalfGemmPath path = requested_path();
  if (path == HalfGemmPath::Auto)
    return onednn_gemm_preferred(dtype) ? HalfGemmPath::OneDnn : HalfGemmPath::Fallback;
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
