// Gradient statistics for logging: the L2 norm of each parameter's gradient (per-layer aggregates
// are formed by train/run_dir.h when the CSV is written).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "autograd/var.h"

namespace normlab {

// (name, ||grad||_2) for every parameter, 0 for a parameter that received no gradient.
std::vector<std::pair<std::string, double>> parameter_grad_norms(
    const std::vector<std::pair<std::string, Var>>& params);

}  // namespace normlab
