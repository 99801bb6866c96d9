// Vectorisable exp and tanh for the CPU kernels' float32 paths. libm's expf/tanhf are scalar
// calls that the compiler cannot vectorise, and GELU's tanh alone took a quarter of a training
// step. float64 keeps std::exp/std::tanh, so the float64 gradient checks see libm's accuracy.
//
// exp(x): write x = k ln2 + r with k = round(x / ln2), |r| <= ln2 / 2 (ln2 split in two parts,
// Cody & Waite, so r is exact); e^r by its degree-7 Taylor series in Horner form (relative error
// below 2e-7 on that interval: the first omitted term is r^8/8! < 1e-9); 2^k by writing k + 127
// into the exponent bits. Inputs are clamped to [-87.3, 88.7]: below, e^x is within a denormal of 0
// (we return about 1e-38); above, k = 128 makes the exponent field all ones, i.e. +inf, as expf.
// tanh(u) = 1 - 2 / (e^(2u) + 1): exact limits +-1 for large |u| (e^(2u) = inf or 0); absolute
// error about 1e-7 near 0, where the cancellation costs relative precision.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace normlab::fast {

inline float exp(float x) {
  x = std::max(-87.3f, std::min(x, 88.7f));
  const float k = std::floor(x * 1.44269504088896341f + 0.5f);
  const float r = (x - k * 0.693359375f) - k * -2.12194440e-4f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(k) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

inline float tanh(float u) { return 1.0f - 2.0f / (exp(2.0f * u) + 1.0f); }

inline double exp(double x) { return std::exp(x); }
inline double tanh(double u) { return std::tanh(u); }

}  // namespace normlab::fast
