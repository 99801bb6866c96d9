// Half precision by staging: bfloat16 and float16 are storage types (core/half.h), nothing is
// computed in them. For a kernel call whose tensors are half, HalfStaging
//   1. converts each half tensor to a float32 temporary (exact: every half value is a float),
//   2. hands the float32 temporaries to the float32 kernel,
//   3. stores each float32 output back into its half tensor, rounded to nearest even,
// so the result is bitwise the float32 kernel on the same (already rounded) inputs, rounded once:
// the rule PyTorch's CPU bfloat16 elementwise kernels follow. The conversions go through the
// backend's copy_strided, so any backend that converts can stage (the CPU's HalfStagingBackend,
// core/cpu/cpu_half_staging.h; the CUDA backend's ops without a 16-bit kernel).
//
// A call's floating tensors share one half dtype, except outputs documented as float32 statistics
// (cross-entropy's lse), which may be float32 and then pass through unconverted.
#pragma once
#include <initializer_list>
#include <vector>

#include "core/backend.h"

namespace normlab {

// One kernel call's tensors, with float32 stand-ins for the half ones. Without a half tensor it
// hands the originals through and store_outputs() does nothing.
class HalfStaging {
 public:
  // Outputs are loaded too: some kernels accumulate into them (axpy, embedding_backward).
  HalfStaging(Backend& backend, const char* op, std::initializer_list<const Tensor*> inputs,
              std::initializer_list<Tensor*> outputs);
  const Tensor& in(size_t i) const { return *inputs_[i]; }
  Tensor& out(size_t i) { return *outputs_[i]; }
  // Rounds every staged output back into its half tensor.
  void store_outputs();

 private:
  const Tensor* stage(const Tensor* t);
  Backend& backend_;
  bool active_ = false;
  std::vector<Tensor> temps_;  // reserved up front: the pointers below point into it
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor*> outputs_, originals_;
};

}  // namespace normlab
