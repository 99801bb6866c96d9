// normlab.ops: the differentiable ops of autograd/ops.h, one binding each, under the C++ names and
// argument order. Every op takes Vars (a Tensor or a NumPy array passes as a constant Var) and
// returns a Var; integer inputs (targets, ids, indices) are int32 Tensors (an integer array is
// converted). Errors are the C++ ones: "[op] ..." raised as normlab.Error.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include "autograd/ops.h"
#include "bindings/bindings.h"

namespace normlab::python {

using namespace nb::literals;

namespace {

Var or_undefined(const std::optional<Var>& v) { return v ? *v : Var(); }

}  // namespace

void bind_ops(nb::module_& m) {
  // ---- elementwise, with NumPy broadcasting ----
  m.def("add", &add, "a"_a, "b"_a, "a + b (broadcasting).");
  m.def("sub", &sub, "a"_a, "b"_a, "a - b (broadcasting).");
  m.def("mul", &mul, "a"_a, "b"_a, "a * b (broadcasting).");
  m.def("div", &div, "a"_a, "b"_a, "a / b (broadcasting).");
  m.def("residual_add", &residual_add, "x"_a, "branch"_a, "x + branch with equal shapes, recorded as the residual connection.");
  m.def("scale", &scale, "x"_a, "alpha"_a, "alpha * x.");
  m.def("add_scalar", &add_scalar, "x"_a, "alpha"_a, "x + alpha.");
  m.def("neg", &neg, "x"_a, "-x.");
  m.def("exp", &normlab::exp, "x"_a, "exp(x).");
  m.def("log", &normlab::log, "x"_a, "log(x).");
  m.def("sqrt", &normlab::sqrt, "x"_a, "sqrt(x).");
  m.def("square", &square, "x"_a, "x ** 2.");
  m.def("tanh", &normlab::tanh, "x"_a, "tanh(x).");
  m.def("relu", &relu, "x"_a, "max(x, 0).");
  m.def("gelu", &gelu, "x"_a, "GELU, tanh approximation (GPT-2).");
  m.def("silu", &silu, "x"_a, "x * sigmoid(x).");
  m.def(
      "rsqrt", [](const Var& x) { return div(constant(Tensor::ones({}, x.dtype())), normlab::sqrt(x)); }, "x"_a,
      "1 / sqrt(x), composed as div(1, sqrt(x)).");

  // ---- reductions ----
  m.def("sum", &normlab::sum, "x"_a, "axis"_a, "keepdim"_a = false, "Sum over one axis (negative counts from the end).");
  m.def("mean", &mean, "x"_a, "axis"_a = -1, "keepdim"_a = false, "Mean over one axis (default: the last).");
  m.def("sum_all", &sum_all, "x"_a, "The sum of every element, a scalar Var of shape ().");
  m.def("mean_all", &mean_all, "x"_a, "The mean of every element, a scalar Var of shape ().");

  // ---- shapes ----
  m.def("reshape", [](const Var& x, const std::vector<int64_t>& shape) { return reshape(x, Shape(shape.begin(), shape.end())); },
        "x"_a, "shape"_a, "x with a new shape (one axis may be -1).");
  m.def("transpose", &transpose, "x"_a, "a"_a, "b"_a, "x with axes a and b swapped (materialised).");
  m.def("split_heads", &split_heads, "x"_a, "heads"_a, "(B, T, C) -> (B, H, T, C/H).");
  m.def("merge_heads", &merge_heads, "x"_a, "(B, H, T, D) -> (B, T, H*D).");
  m.def("narrow_last", &narrow_last, "x"_a, "start"_a, "length"_a, "x[..., start:start + length].");
  m.def("cast", [](const Var& x, const std::string& dtype) { return cast(x, parse_dtype(dtype)); }, "x"_a, "dtype"_a,
        "x converted to dtype; the gradient is converted back.");

  // ---- index moves ----
  m.def("gather_last", &gather_last, "x"_a, "idx"_a, "x (..., E), idx int32 (..., k) -> x[..., idx] along the last axis.");
  m.def("scatter_add_rows", &scatter_add_rows, "src"_a, "rows"_a, "n_rows"_a,
        "src (n, C), rows int32 (n,) -> (n_rows, C) zeros with y[rows[i]] += src[i].");
  m.def("embedding", &embedding, "weight"_a, "ids"_a, "padding_idx"_a = -1,
        "weight (V, C), ids int32 (any shape) -> (*ids.shape, C).");

  // ---- products ----
  m.def("matmul", &matmul, "a"_a, "b"_a, "trans_a"_a = false, "trans_b"_a = false,
        "op(a) @ op(b) over the last two axes; batched, or with b (K, N) shared across the batch.");
  m.def("linear", [](const Var& x, const Var& w, const std::optional<Var>& b) { return linear(x, w, or_undefined(b)); },
        "x"_a, "weight"_a, "bias"_a = nb::none(), "x @ weight.T + bias, weight (out, in) as in PyTorch.");

  // ---- softmax, losses, dropout ----
  m.def("softmax", &softmax, "x"_a, "Softmax over the last axis.");
  m.def("causal_softmax", &causal_softmax, "x"_a, "window"_a = 0, "scale"_a = 1.0,
        "Causal softmax of scale * x over (..., T, T); window > 0: a sliding window of window + 1 keys.");
  m.def("masked_softmax", [](const Var& x, const std::optional<Tensor>& key_padding, bool causal, double s) {
          return masked_softmax(x, key_padding ? *key_padding : Tensor(), causal, s);
        },
        "x"_a, "key_padding"_a = nb::none(), "causal"_a = false, "scale"_a = 1.0,
        "Attention softmax of scale * x with key_padding int32 (B, Tk), 1 = pad.");
  m.def("logsumexp", &logsumexp, "x"_a, "log sum exp over the last axis, stable.");
  m.def("cross_entropy", &cross_entropy, "logits"_a, "targets"_a, "ignore_index"_a = -1,
        "Mean token cross-entropy of logits (..., V) against int32 targets (...), fused with log-softmax.");
  m.def("label_smoothed_cross_entropy", &label_smoothed_cross_entropy, "logits"_a, "targets"_a, "epsilon"_a,
        "ignore_index"_a = -1, "fairseq's label-smoothed cross-entropy, a mean over the counted tokens.");
  m.def("dropout", &dropout, "x"_a, "p"_a, "seed"_a, "training"_a = true,
        "Inverted dropout with a counter-based mask from seed; identity when not training or p == 0.");

  // ---- normalization: fused, analytic backward ----
  m.def("layer_norm",
        [](const Var& x, const std::optional<Var>& gamma, const std::optional<Var>& beta, double eps) {
          return layer_norm(x, or_undefined(gamma), or_undefined(beta), eps);
        },
        "x"_a, "gamma"_a = nb::none(), "beta"_a = nb::none(), "eps"_a = 1e-5,
        "LayerNorm over the last axis (biased variance): (x - mean) / sqrt(var + eps) * gamma + beta.");
  m.def("rms_norm",
        [](const Var& x, const std::optional<Var>& weight, double eps, bool unit_offset) {
          return rms_norm(x, or_undefined(weight), eps, unit_offset);
        },
        "x"_a, "weight"_a = nb::none(), "eps"_a = 1e-6, "unit_offset"_a = false,
        "RMSNorm over the last axis: x / sqrt(mean(x^2) + eps) * g, g = weight or 1 + weight (unit_offset).");
  m.def("group_norm",
        [](const Var& x, const std::optional<Var>& gamma, const std::optional<Var>& beta, int64_t groups, double eps) {
          return group_norm(x, or_undefined(gamma), or_undefined(beta), groups, eps);
        },
        "x"_a, "gamma"_a = nb::none(), "beta"_a = nb::none(), "groups"_a = 1, "eps"_a = 1e-5,
        "GroupNorm over the last axis split into `groups` contiguous groups.");
  m.def("identity_norm", &identity_norm, "x"_a, "The no-normalization baseline: y = x, its own tape node.");
}

}  // namespace normlab::python
