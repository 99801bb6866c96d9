// Gradient-check cases for the normalization ops (registered into autograd/gradcheck.h's registry).
// x is (3, 5, 8) by default (15 rows, so the row-wise and column-wise sums are both exercised);
// a shape hint replaces x's shape and the parameters follow its last axis C. Parameters start away
// from the identity (gamma = 1 + 0.1 N(0,1), beta = 0.5 N(0,1)) so their gradients are non-trivial.
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "core/ops.h"
#include "core/random.h"

namespace normlab {

namespace {

// How a case's non-x input is drawn, per channel (C,).
enum class Init { Gamma, Beta, Offset, Positive };

Tensor draw(Init init, int64_t C, Generator& gen) {
  const Tensor n = Tensor::randn({C}, gen, 0.0, 1.0, DType::F64);
  switch (init) {
    case Init::Gamma: return ops::unary(UnaryOp::AddScalar, ops::scale(n, 0.1), 1.0);
    case Init::Beta: return ops::scale(n, 0.5);
    case Init::Offset: return ops::scale(n, 0.1);  // a Gemma-style stored weight near 0
    case Init::Positive: return ops::unary(UnaryOp::Exp, ops::scale(n, 0.3));  // running variance
  }
  return n;
}

struct Input {
  std::string name;
  Init init;
  bool differentiable = true;
};

OpCase norm_case(std::string name, std::string description, std::vector<Input> params, GradFn fn) {
  OpCase c;
  c.name = std::move(name);
  c.description = std::move(description);
  c.input_names = {"x"};
  c.differentiable = {0};
  for (size_t i = 0; i < params.size(); ++i) {
    c.input_names.push_back(params[i].name);
    if (params[i].differentiable) c.differentiable.push_back(static_cast<int>(i + 1));
  }
  c.make_inputs = [params](uint64_t seed, const Shape& hint) {
    Generator gen(seed);
    const Shape x_shape = hint.empty() ? Shape{3, 5, 8} : hint;
    std::vector<Tensor> t{Tensor::randn(x_shape, gen, 0.3, 1.5, DType::F64)};
    for (const Input& p : params) t.push_back(draw(p.init, x_shape.back(), gen));
    return t;
  };
  c.fn = std::move(fn);
  c.options.step = 1e-5;
  return c;
}

// GroupNorm's group count for C channels: 2 when it divides C, else 1 (groups of >= 4 channels by
// default: a group of 2 values has xhat = +-1 and a variance that can be tiny, a poor FD target).
int64_t groups_for(int64_t C) { return C % 2 == 0 ? 2 : 1; }

}  // namespace

void register_norm_cases(std::vector<OpCase>& cases) {
  const Input gamma{"gamma", Init::Gamma}, beta{"beta", Init::Beta};
  cases.push_back(norm_case("layer_norm", "LayerNorm over the last axis, gamma and beta", {gamma, beta},
                            [](const std::vector<Var>& v) { return layer_norm(v[0], v[1], v[2], 1e-5); }));
  cases.push_back(norm_case("layer_norm_no_affine", "LayerNorm without gamma/beta", {},
                            [](const std::vector<Var>& v) { return layer_norm(v[0], Var(), Var(), 1e-5); }));
  cases.push_back(norm_case("rms_norm", "RMSNorm, y = x / rms(x) * w", {{"weight", Init::Gamma}},
                            [](const std::vector<Var>& v) { return rms_norm(v[0], v[1], 1e-6); }));
  cases.push_back(norm_case("rms_norm_unit_offset", "RMSNorm with Gemma's (1 + w) scale",
                            {{"weight", Init::Offset}}, [](const std::vector<Var>& v) {
                              return rms_norm(v[0], v[1], 1e-6, /*unit_offset=*/true);
                            }));
  cases.push_back(norm_case("group_norm", "GroupNorm, 2 groups of the last axis (1 if C is odd)",
                            {gamma, beta}, [](const std::vector<Var>& v) {
                              return group_norm(v[0], v[1], v[2], groups_for(v[0].size(-1)), 1e-5);
                            }));
  cases.push_back(norm_case("batch_norm", "BatchNorm, training: statistics per channel over all rows",
                            {gamma, beta}, [](const std::vector<Var>& v) {
                              return batch_norm(v[0], v[1], v[2], Tensor(), Tensor(), /*training=*/true);
                            }));
  cases.push_back(norm_case("batch_norm_eval", "BatchNorm, eval: fixed running statistics",
                            {gamma, beta, {"r_mean", Init::Beta, false}, {"r_var", Init::Positive, false}},
                            [](const std::vector<Var>& v) {
                              return batch_norm(v[0], v[1], v[2], v[3].value(), v[4].value(), /*training=*/false);
                            }));
  cases.push_back(norm_case("identity_norm", "no normalization: y = x (the baseline)", {},
                            [](const std::vector<Var>& v) { return identity_norm(v[0]); }));
  cases.push_back(norm_case("residual_norm_block", "x + gelu(LN(x)) * w: x reaches y by two paths",
                            {gamma, beta, {"w", Init::Gamma}}, [](const std::vector<Var>& v) {
                              return residual_add(v[0], mul(gelu(layer_norm(v[0], v[1], v[2], 1e-5)), v[3]));
                            }));
}

}  // namespace normlab
