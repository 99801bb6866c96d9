#include "autograd/autocast.h"

#include "autograd/ops.h"

namespace normlab {

namespace {
thread_local DType g_autocast = DType::F32;
}  // namespace

AutocastGuard::AutocastGuard(DType dtype) : previous_(g_autocast) {
  NL_CHECK(dtype == DType::F32 || is_half(dtype), "autocast",
           "dtype must be float32 (off), bfloat16 or float16, got {}", dtype_name(dtype));
  g_autocast = dtype;
}

AutocastGuard::~AutocastGuard() { g_autocast = previous_; }

DType autocast_dtype() { return g_autocast; }

Var autocast(const Var& x) {
  if (g_autocast == DType::F32 || !x.defined() || x.value().dtype() != DType::F32) return x;
  return cast(x, g_autocast);
}

Tensor autocast(const Tensor& x) {
  if (g_autocast == DType::F32 || !x.defined() || x.dtype() != DType::F32) return x;
  return x.to(g_autocast);
}

Var in_float32(const Var& x) {
  if (!x.defined() || !is_half(x.value().dtype())) return x;
  return cast(x, DType::F32);
}

}  // namespace normlab
