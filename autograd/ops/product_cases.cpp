// Gradient-check cases for matmul (every transpose pair, batched, shared weight) and linear.
// Each product is linear in each input separately, and gradcheck perturbs one element at a time,
// so a central difference is exact up to rounding: a large step keeps rounding small.
#include "autograd/ops.h"
#include "autograd/ops/case_inputs.h"

namespace normlab {

using cases::normal_case;

namespace {

constexpr double kStep = 1e-3;

OpCase matmul_case(std::string name, std::string description, Shape a, Shape b, bool ta, bool tb) {
  return normal_case(std::move(name), std::move(description), {"a", "b"}, {std::move(a), std::move(b)},
                     [ta, tb](const std::vector<Var>& v) { return matmul(v[0], v[1], ta, tb); }, kStep);
}

}  // namespace

void register_product_cases(std::vector<OpCase>& c) {
  c.push_back(matmul_case("matmul", "A (3, 4) @ B (4, 5)", {3, 4}, {4, 5}, false, false));
  c.push_back(matmul_case("matmul_tn", "A^T @ B, A (4, 3), B (4, 5)", {4, 3}, {4, 5}, true, false));
  c.push_back(matmul_case("matmul_nt", "A @ B^T, A (3, 4), B (5, 4)", {3, 4}, {5, 4}, false, true));
  c.push_back(matmul_case("matmul_tt", "A^T @ B^T, A (4, 3), B (5, 4)", {4, 3}, {5, 4}, true, true));
  c.push_back(matmul_case("matmul_batched", "A (2, 3, 3, 4) @ B (2, 3, 4, 5) per batch entry",
                          {2, 3, 3, 4}, {2, 3, 4, 5}, false, false));
  c.push_back(matmul_case("matmul_batched_tt", "A^T @ B^T per batch entry, A (2, 4, 3), B (2, 5, 4)",
                          {2, 4, 3}, {2, 5, 4}, true, true));
  c.push_back(matmul_case("matmul_shared_weight", "A (2, 3, 4) @ W (4, 5), W shared over the batch",
                          {2, 3, 4}, {4, 5}, false, false));
  c.push_back(matmul_case("matmul_shared_tn", "A^T @ W, A (2, 4, 3), W (4, 5) shared", {2, 4, 3},
                          {4, 5}, true, false));
  c.push_back(matmul_case("matmul_shared_nt", "A @ W^T, A (2, 3, 4), W (5, 4) shared", {2, 3, 4},
                          {5, 4}, false, true));
  c.push_back(matmul_case("matmul_shared_tt", "A^T @ W^T, A (2, 4, 3), W (5, 4) shared", {2, 4, 3},
                          {5, 4}, true, true));
  c.push_back(normal_case("linear", "x (2, 3, 4) W^T + b, W (5, 4), b (5,)", {"x", "weight", "bias"},
                          {{2, 3, 4}, {5, 4}, {5}},
                          [](const std::vector<Var>& v) { return linear(v[0], v[1], v[2]); }, kStep));
  c.push_back(normal_case("linear_no_bias", "x (3, 4) W^T, W (5, 4), no bias", {"x", "weight"},
                          {{3, 4}, {5, 4}},
                          [](const std::vector<Var>& v) { return linear(v[0], v[1], Var()); }, kStep));
}

}  // namespace normlab
