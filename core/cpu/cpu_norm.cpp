// PLACEHOLDER: fused normalization kernels are being written (LayerNorm, RMSNorm, GroupNorm, BatchNorm).
#include "core/cpu/cpu_backend.h"

namespace normlab {

void CpuBackend::layer_norm_forward(const Tensor&, const Tensor&, const Tensor&, double, Tensor&, Tensor&, Tensor&) { fail("layer_norm", "not implemented yet"); }
void CpuBackend::layer_norm_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor&, Tensor&) { fail("layer_norm", "not implemented yet"); }
void CpuBackend::rms_norm_forward(const Tensor&, const Tensor&, double, bool, Tensor&, Tensor&) { fail("rms_norm", "not implemented yet"); }
void CpuBackend::rms_norm_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, bool, Tensor&, Tensor&) { fail("rms_norm", "not implemented yet"); }
void CpuBackend::group_norm_forward(const Tensor&, const Tensor&, const Tensor&, int64_t, double, Tensor&, Tensor&, Tensor&) { fail("group_norm", "not implemented yet"); }
void CpuBackend::group_norm_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t, Tensor&, Tensor&, Tensor&) { fail("group_norm", "not implemented yet"); }
void CpuBackend::batch_norm_forward(const Tensor&, const Tensor&, const Tensor&, double, Tensor&, Tensor&, Tensor&) { fail("batch_norm", "not implemented yet"); }
void CpuBackend::batch_norm_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor&, Tensor&) { fail("batch_norm", "not implemented yet"); }

}  // namespace normlab
