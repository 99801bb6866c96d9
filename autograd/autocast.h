// Mixed precision by scope, like PyTorch's autocast: while an AutocastGuard(bfloat16 or float16)
// is alive on this thread, layers compute on 16-bit copies of their float32 (master) weights:
//   autocast(w)   a float32 weight or activation cast to the 16-bit dtype (recorded as a `cast`
//                 node, so the gradient arrives back in float32 for the optimizer);
//   in_float32(x) a 16-bit activation cast up where precision matters: cross-entropy and the MoE
//                 router run in float32 (as Hugging Face's models do in bf16/fp16).
// Norms and attention's softmax take 16-bit inputs and compute in float32 inside the kernel.
// Without a guard (or with a float32 guard) both are the identity: float32 and float64 runs are
// bitwise unchanged. The guard nests; the destructor restores the previous dtype.
#pragma once
#include "autograd/var.h"

namespace normlab {

class AutocastGuard {
 public:
  // dtype: F32 (off), BF16 or F16; anything else throws "[autocast] ...".
  explicit AutocastGuard(DType dtype);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DType previous_;
};

// The active 16-bit dtype, or F32 when no guard is active.
DType autocast_dtype();

// x cast to the active 16-bit dtype when x is float32; x itself otherwise (also when undefined).
Var autocast(const Var& x);
// The tensor version, for constants such as RoPE's cos/sin tables (no gradient).
Tensor autocast(const Tensor& x);
// x cast to float32 when it is a 16-bit tensor; x itself otherwise.
Var in_float32(const Var& x);

}  // namespace normlab
