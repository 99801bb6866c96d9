// Reference normalizations composed of plain differentiable ops (mean, sub, square, add_scalar,
// sqrt, div, mul, add, reshape): slow, many tape nodes, but each line is the textbook formula.
// They are the specification the fused ops in autograd/ops/norm.cpp are tested against, forward
// and backward (tests/autograd/norm_test.cpp). Same arguments and conventions as the fused ops;
// undefined gamma/beta/weight mean no affine.
#pragma once
#include "autograd/ops.h"

namespace normlab::reference {

// mean, biased var over the last axis; y = (x - mean) / sqrt(var + eps) * gamma + beta.
Var layer_norm(const Var& x, const Var& gamma, const Var& beta, double eps = 1e-5);
// y = x / sqrt(mean(x^2) + eps) * s, s = weight or (1 + weight) when unit_offset.
Var rms_norm(const Var& x, const Var& weight, double eps = 1e-6, bool unit_offset = false);
// x (..., C) -> (..., G, C/G), normalized over the last axis, back to (..., C), then the affine.
Var group_norm(const Var& x, const Var& gamma, const Var& beta, int64_t groups, double eps = 1e-5);
// Training-mode BatchNorm: mean and biased var per channel over every leading axis.
Var batch_norm(const Var& x, const Var& gamma, const Var& beta, double eps = 1e-5);

}  // namespace normlab::reference
