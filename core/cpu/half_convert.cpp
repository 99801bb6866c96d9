// Vectorised float32 <-> 16-bit conversions (see half_convert.h). bfloat16 is plain integer work the
// compiler vectorises; float16 uses the F16C instructions (16 lanes with AVX-512), which round to
// nearest even like the scalar _cvtss_sh in core/half.h.
#include "core/cpu/half_convert.h"

#include <bit>
#include <cstring>
#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace normlab {

void to_float(const bfloat16* src, float* dst, int64_t n) {
  const auto* s = reinterpret_cast<const uint16_t*>(src);
  auto* d = reinterpret_cast<uint32_t*>(dst);
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<uint32_t>(s[i]) << 16;
}

// float_to_bf16 (core/half.h) without a branch, so that it vectorises.
void from_float(const float* src, bfloat16* dst, int64_t n) {
  const auto* s = reinterpret_cast<const uint32_t*>(src);
  auto* d = reinterpret_cast<uint16_t*>(dst);
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t u = s[i];
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const uint32_t quiet_nan = (u >> 16) | 0x0040u;
    d[i] = static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
  }
}

// GCC 12's own _mm512_cvtph_ps / _mm512_cvtps_ph start from a self-initialised "undefined" vector
// and warn that it may be used uninitialised (GCC bug 105593): silenced for these two functions.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

void to_float(const float16* src, float* dst, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i))));
#elif defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
#endif
  for (; i < n; ++i) dst[i] = f16_to_float(src[i]);
}

void from_float(const float* src, float16* dst, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
#elif defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
#endif
  for (; i < n; ++i) dst[i] = float_to_f16(src[i]);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace normlab
