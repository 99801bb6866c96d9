// The two 16-bit floating types, as storage: bfloat16 (1 sign, 8 exponent, 7 mantissa bits: float32's
// range, 3 significant digits) and IEEE float16 (1, 5, 10: max 65504, subnormals below 2^-14).
// Arithmetic is never done in them: kernels load to float, compute, and store back rounded.
//
// float -> 16 bits rounds to nearest, ties to even; NaN stays NaN (quiet), +-inf stays +-inf; a
// float16 result above 65504 (after rounding) becomes +-inf, one below its smallest subnormal 0.
// 16 bits -> float is exact.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>
#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace normlab {

struct bfloat16 {
  uint16_t bits = 0;
};
struct float16 {
  uint16_t bits = 0;
};

constexpr float bf16_to_float(bfloat16 h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h.bits) << 16);
}

constexpr bfloat16 float_to_bf16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)  // NaN: keep the sign and a quiet payload
    return {static_cast<uint16_t>((u >> 16) | 0x0040u)};
  // Round to nearest even on the 16 dropped bits: add 0x7fff plus the kept lowest bit. A carry
  // into the exponent is the correct rounding (up to inf for values above bfloat16's max).
  const uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);
  return {static_cast<uint16_t>(rounded >> 16)};
}

constexpr float f16_to_float(float16 h) {
#if defined(__F16C__)  // one instruction (the same exact conversion) where the build targets F16C
  if (!std::is_constant_evaluated()) return _cvtsh_ss(h.bits);
#endif
  const uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  const uint32_t exponent = (h.bits >> 10) & 0x1fu;
  uint32_t mantissa = h.bits & 0x3ffu;
  if (exponent == 0x1f)  // inf or NaN
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0)  // normal: rebias 15 -> 127
    return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  if (mantissa == 0) return std::bit_cast<float>(sign);  // +-0
  // subnormal: value = mantissa * 2^-24; normalise it for float32
  int shift = 0;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    ++shift;
  }
  const uint32_t exp32 = static_cast<uint32_t>(113 - shift);  // 2^(1-15-shift) as a float exponent
  return std::bit_cast<float>(sign | (exp32 << 23) | ((mantissa & 0x3ffu) << 13));
}

constexpr float16 float_to_f16(float f) {
#if defined(__F16C__)  // round to nearest even in hardware; tests/core/half_test.cpp checks both agree
  if (!std::is_constant_evaluated()) return {static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT))};
#endif
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return {static_cast<uint16_t>(sign | 0x7e00u)};  // NaN (quiet)
  if (magnitude >= 0x477ff000u) return {static_cast<uint16_t>(sign | 0x7c00u)};  // rounds to >= 65520: inf
  if (magnitude >= 0x38800000u) {  // normal float16 (>= 2^-14)
    const uint32_t rebased = magnitude - (112u << 23);  // exponent 127 -> 15
    const uint32_t rounded = rebased + 0xfffu + ((rebased >> 13) & 1u);
    return {static_cast<uint16_t>(sign | (rounded >> 13))};
  }
  if (magnitude < 0x33000000u) return {sign};  // below half the smallest subnormal (2^-25): 0
  // subnormal float16: shift the implicit-1 mantissa right, round to nearest even
  const uint32_t exp32 = magnitude >> 23;
  const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - exp32;  // bits dropped: 14 for 2^-15 .. 24 for 2^-25
  const uint32_t half_ulp = 1u << (shift - 1);
  const uint32_t kept = mantissa >> shift;
  const uint32_t rest = mantissa & ((1u << shift) - 1u);
  const uint32_t round_up = rest > half_ulp || (rest == half_ulp && (kept & 1u));
  return {static_cast<uint16_t>(sign | (kept + round_up))};
}

// Round a float through the 16-bit type and back (what storing it and loading it again gives).
constexpr float round_to_bf16(float f) { return bf16_to_float(float_to_bf16(f)); }
constexpr float round_to_f16(float f) { return f16_to_float(float_to_f16(f)); }

// Load/store for kernels templated on their storage type S with float arithmetic.
inline float load_float(float v) { return v; }
inline float load_float(bfloat16 v) { return bf16_to_float(v); }
inline float load_float(float16 v) { return f16_to_float(v); }
template <typename S> S store_float(float v);
template <> inline float store_float<float>(float v) { return v; }
template <> inline bfloat16 store_float<bfloat16>(float v) { return float_to_bf16(v); }
template <> inline float16 store_float<float16>(float v) { return float_to_f16(v); }

// double -> float rounded to odd (truncate, then set the last bit when inexact), so that a second
// rounding to 16 bits is the correctly rounded one (rounding twice to nearest could land on a tie).
inline float float_round_to_odd(double d) {
  float f = static_cast<float>(d);
  const double back = static_cast<double>(f);
  if (back == d || std::isnan(d) || std::isinf(f)) return f;
  if (std::fabs(back) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

template <typename T> inline constexpr bool is_half_v =
    std::is_same_v<T, bfloat16> || std::is_same_v<T, float16>;

// One element converted between any two of float, double, int32_t, bfloat16, float16.
template <typename D, typename S> D convert_element(S v) {
  if constexpr (is_half_v<S>) {
    return convert_element<D>(load_float(v));
  } else if constexpr (is_half_v<D>) {
    if constexpr (std::is_same_v<S, float>) return store_float<D>(v);
    else return store_float<D>(float_round_to_odd(static_cast<double>(v)));
  } else {
    return static_cast<D>(v);
  }
}

}  // namespace normlab
