// Built without oneDNN (NORMLAB_ONEDNN=OFF, or AUTO without libdnnl-dev): half GEMMs take the
// float32 fallback (core/cpu/half_gemm.cpp).
#include "core/cpu/f32_gemm.h"
#include "core/cpu/half_gemm.h"

namespace normlab {

bool onednn_gemm_available(DType) { return false; }
bool onednn_gemm_preferred(DType) { return false; }

void onednn_gemm(const GemmArgs&, const Tensor&, const Tensor&, Tensor&) {
  fail("gemm", "normlab was built without oneDNN (NORMLAB_ONEDNN)");
}

bool onednn_f32_available() { return false; }

void onednn_sgemm_one_thread(const SgemmPiece&) {
  fail("gemm", "normlab was built without oneDNN (NORMLAB_ONEDNN)");
}

}  // namespace normlab
