// Contiguous runs converted between float32 and a 16-bit storage type, in vector registers where
// the build targets them (AVX-512 F16C conversions for float16; integer rounding for bfloat16).
// Element for element the same as load_float / store_float (core/half.h): round to nearest even,
// NaN stays a quiet NaN, float16 overflow becomes inf (tests/core/half_convert_test.cpp).
#pragma once
#include <cstdint>

#include "core/backend.h"
#include "core/half.h"

namespace normlab {

void to_float(const bfloat16* src, float* dst, int64_t n);
void to_float(const float16* src, float* dst, int64_t n);
void from_float(const float* src, bfloat16* dst, int64_t n);
void from_float(const float* src, float16* dst, int64_t n);
inline void to_float(const float* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
}
inline void from_float(const float* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
}

// Elements per chunk for kernels that work through a tensor in pieces: 16 KiB of float32, so a
// few chunks stay in L1. A multiple of every vector width: chunk boundaries never change how an
// element is computed.
inline constexpr int64_t kChunkElements = 4096;

// Calls f(begin, count) for consecutive chunks of [0, n) of kChunkElements (the last may be
// shorter), over OpenMP threads when n > parallel_above and more than one thread is set. The
// chunks do not depend on the thread count, so neither does any result.
template <typename F> void for_each_chunk(int64_t n, int64_t parallel_above, F&& f) {
  const int64_t chunks = (n + kChunkElements - 1) / kChunkElements;
  const auto one = [&](int64_t c) {
    const int64_t begin = c * kChunkElements;
    f(begin, n - begin < kChunkElements ? n - begin : kChunkElements);
  };
  if (n > parallel_above && chunks > 1 && num_threads() > 1) {
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < chunks; ++c) one(c);
  } else {
    for (int64_t c = 0; c < chunks; ++c) one(c);
  }
}

}  // namespace normlab
