#include "core/denormals.h"

#include <omp.h>

#include "core/error.h"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace normlab {

namespace {

#if defined(__x86_64__)
constexpr unsigned kFlushToZero = 0x8000;      // MXCSR bit 15: FTZ
constexpr unsigned kDenormalsAreZero = 0x0040;  // MXCSR bit 6: DAZ
constexpr unsigned kFlushBits = kFlushToZero | kDenormalsAreZero;

void set_this_thread(bool on) {
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(on ? (csr | kFlushBits) : (csr & ~kFlushBits));
}
#endif

}  // namespace

void set_flush_denormals(bool on) {
#if defined(__x86_64__)
  set_this_thread(on);
#pragma omp parallel num_threads(omp_get_max_threads())
  set_this_thread(on);
#else
  NL_CHECK(!on, "flush_denormals", "flushing subnormals is implemented for x86-64 only");
#endif
}

bool flush_denormals_enabled() {
#if defined(__x86_64__)
  return (_mm_getcsr() & kFlushBits) == kFlushBits;
#else
  return false;
#endif
}

}  // namespace normlab
