// PLACEHOLDER: ops whose families are still being written throw here.
#include "autograd/ops.h"

namespace normlab {
Var reshape(const Var&, const Shape&) { fail("reshape", "not implemented yet"); }
Var transpose(const Var&, int, int) { fail("transpose", "not implemented yet"); }
Var split_heads(const Var&, int64_t) { fail("split_heads", "not implemented yet"); }
Var merge_heads(const Var&) { fail("merge_heads", "not implemented yet"); }
Var narrow_last(const Var&, int64_t, int64_t) { fail("narrow_last", "not implemented yet"); }
Var matmul(const Var&, const Var&, bool, bool) { fail("matmul", "not implemented yet"); }
Var linear(const Var&, const Var&, const Var&) { fail("linear", "not implemented yet"); }
Var softmax(const Var&) { fail("softmax", "not implemented yet"); }
Var causal_softmax(const Var&) { fail("causal_softmax", "not implemented yet"); }
Var embedding(const Var&, const Tensor&) { fail("embedding", "not implemented yet"); }
Var cross_entropy(const Var&, const Tensor&, int32_t) { fail("cross_entropy", "not implemented yet"); }
Var dropout(const Var&, double, uint64_t, bool) { fail("dropout", "not implemented yet"); }
Var layer_norm(const Var&, const Var&, const Var&, double) { fail("layer_norm", "not implemented yet"); }
Var rms_norm(const Var&, const Var&, double, bool) { fail("rms_norm", "not implemented yet"); }
Var group_norm(const Var&, const Var&, const Var&, int64_t, double) { fail("group_norm", "not implemented yet"); }
Var batch_norm(const Var&, const Var&, const Var&, Tensor, Tensor, bool, double, double) { fail("batch_norm", "not implemented yet"); }
}  // namespace normlab
