// Backend kernels on bfloat16/float16 tensors (core/cpu/cpu_half_staging.h). The rule under test:
// a half kernel's output is BITWISE the float32 kernel applied to the same (half-rounded) inputs,
// rounded to nearest even once. The expected bits come from core/half.h's scalar conversions, not
// from the tensor conversions the staging layer uses.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "core/backend.h"
#include "core/half.h"
#include "core/random.h"
#include "core/tensor.h"

namespace normlab {
namespace {

Backend& cpu() { return cpu_backend(); }

uint16_t rounded_bits(DType half, float f) {
  return half == DType::BF16 ? float_to_bf16(f).bits : float_to_f16(f).bits;
}

// A kernel argument: its values (an output's initial values: accumulating kernels read them) and
// whether it stays float32 in the half call (statistics such as cross-entropy's lse).
struct Arg {
  Tensor value;
  bool float32 = false;
};

using Kernel = std::function<void(const std::vector<Tensor>& in, std::vector<Tensor>& out)>;

// Runs `kernel` once on half tensors and once on their exact float32 values, and checks each half
// output against the float32 output rounded (float32 outputs must be equal).
// A backward's inputs that a forward produced must be given as inputs (computed by the half kernel),
// so that both calls read the same rounded values.
void expect_staged(DType half, const std::vector<Arg>& inputs, const std::vector<Arg>& outputs,
                   const Kernel& kernel) {
  std::vector<Tensor> in_h, in_f, out_h, out_f;
  auto add = [&](const Arg& a, std::vector<Tensor>& h, std::vector<Tensor>& f) {
    h.push_back(!a.value.defined() ? Tensor() : a.float32 ? a.value.clone() : a.value.to(half));
    f.push_back(a.value.defined() ? h.back().to(DType::F32) : Tensor());
  };
  for (const Arg& a : inputs) add(a, in_h, in_f);
  for (const Arg& a : outputs) add(a, out_h, out_f);
  kernel(in_h, out_h);
  kernel(in_f, out_f);
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (!out_h[j].defined()) continue;
    const float* want = out_f[j].data<float>();
    const int64_t n = out_f[j].numel();
    ASSERT_GT(n, 0);
    if (outputs[j].float32) {
      ASSERT_EQ(out_h[j].dtype(), DType::F32);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out_h[j].data<float>()[i], want[i]) << "output " << j;
      continue;
    }
    ASSERT_EQ(out_h[j].dtype(), half);
    const auto* got = static_cast<const uint16_t*>(out_h[j].raw_data());
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(got[i], rounded_bits(half, want[i]))
          << dtype_name(half) << " output " << j << " element " << i << ": float32 kernel gave " << want[i];
  }
}

Tensor randn(const Shape& shape, uint64_t seed, double mean = 0.0, double std = 1.0) {
  Generator gen(seed);
  return Tensor::randn(shape, gen, mean, std, DType::F32);
}

Tensor positive(const Shape& shape, uint64_t seed) {
  Generator gen(seed);
  return Tensor::uniform(shape, gen, 0.2, 3.0, DType::F32);
}

class HalfKernels : public ::testing::TestWithParam<DType> {};

TEST_P(HalfKernels, UnaryForwardAndBackward) {
  const DType h = GetParam();
  const std::vector<UnaryOp> ops{UnaryOp::Neg,  UnaryOp::Exp,  UnaryOp::Log,  UnaryOp::Sqrt,
                                 UnaryOp::Square, UnaryOp::Tanh, UnaryOp::Relu, UnaryOp::Gelu,
                                 UnaryOp::Silu, UnaryOp::Scale, UnaryOp::AddScalar};
  for (UnaryOp op : ops) {
    const bool needs_positive = op == UnaryOp::Log || op == UnaryOp::Sqrt;
    const Tensor x = needs_positive ? positive({7, 33}, 1) : randn({7, 33}, 1, 0.0, 2.0);
    expect_staged(h, {{x}}, {{Tensor::zeros({7, 33})}}, [&](const auto& in, auto& out) {
      cpu().unary(op, in[0], out[0], 0.37);
    });
    Tensor y = Tensor::empty({7, 33}, h);
    cpu().unary(op, x.to(h), y, 0.37);
    expect_staged(h, {{x}, {y.to(DType::F32)}, {randn({7, 33}, 2)}}, {{Tensor::zeros({7, 33})}},
                  [&](const auto& in, auto& out) {
                    cpu().unary_backward(op, in[0], in[1], in[2], out[0], 0.37);
                  });
  }
}

TEST_P(HalfKernels, BinaryWithBroadcastingAndAxpy) {
  const DType h = GetParam();
  const std::vector<std::pair<Shape, Shape>> shapes{
      {{4, 9}, {4, 9}}, {{4, 9}, {9}}, {{1}, {4, 9}}, {{4, 1, 9}, {3, 1}}};
  for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div})
    for (const auto& [sa, sb] : shapes) {
      const Shape so = broadcast_shapes(sa, sb, "test");
      expect_staged(h, {{randn(sa, 3)}, {positive(sb, 4)}}, {{Tensor::zeros(so)}},
                    [&](const auto& in, auto& out) { cpu().binary(op, in[0], in[1], out[0]); });
    }
  // y += alpha x: the output's old values take part.
  expect_staged(h, {{randn({50}, 5)}}, {{randn({50}, 6)}},
                [&](const auto& in, auto& out) { cpu().axpy(-0.3, in[0], out[0]); });
}

// Above kParallelElements the contiguous kernels work in chunks over the threads
// (core/cpu/cpu_half_elementwise.cpp): several chunks, a ragged last one, at 1 and 2 threads.
TEST_P(HalfKernels, LargeTensorsInChunksOverThreadsKeepTheRule) {
  const DType h = GetParam();
  const Shape shape{9, 4111};  // 36999 elements: 10 chunks, the last of 135
  const int threads_before = num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    SCOPED_TRACE(testing::Message() << threads << " thread(s)");
    for (UnaryOp op : {UnaryOp::Gelu, UnaryOp::Exp, UnaryOp::Scale}) {
      const Tensor x = randn(shape, 11, 0.0, 2.0);
      expect_staged(h, {{x}}, {{Tensor::zeros(shape)}},
                    [&](const auto& in, auto& out) { cpu().unary(op, in[0], out[0], 0.37); });
    }
    // Backwards that read x only (gelu) and y only (tanh).
    expect_staged(h, {{randn(shape, 12)}, {Tensor()}, {randn(shape, 13)}}, {{Tensor::zeros(shape)}},
                  [&](const auto& in, auto& out) {
                    cpu().unary_backward(UnaryOp::Gelu, in[0], in[1], in[2], out[0], 0.0);
                  });
    expect_staged(h, {{Tensor()}, {randn(shape, 14, 0.0, 0.5)}, {randn(shape, 15)}}, {{Tensor::zeros(shape)}},
                  [&](const auto& in, auto& out) {
                    cpu().unary_backward(UnaryOp::Tanh, in[0], in[1], in[2], out[0], 0.0);
                  });
    for (BinaryOp op : {BinaryOp::Sub, BinaryOp::Div})
      expect_staged(h, {{randn(shape, 16)}, {positive(shape, 17)}}, {{Tensor::zeros(shape)}},
                    [&](const auto& in, auto& out) { cpu().binary(op, in[0], in[1], out[0]); });
    expect_staged(h, {{randn(shape, 18)}}, {{randn(shape, 19)}},
                  [&](const auto& in, auto& out) { cpu().axpy(-0.3, in[0], out[0]); });
  }
  set_num_threads(threads_before);
}

TEST_P(HalfKernels, Reductions) {
  const DType h = GetParam();
  const Tensor x = randn({3, 40, 5}, 7);
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max})
    for (int axis : {0, 1, 2}) {
      Shape s = x.shape();
      s.erase(s.begin() + axis);
      expect_staged(h, {{x}}, {{Tensor::zeros(s)}},
                    [&](const auto& in, auto& out) { cpu().reduce_axis(op, in[0], axis, out[0]); });
    }
  for (const Shape& s : {Shape{5}, Shape{3, 1, 5}, Shape{40, 1}})
    expect_staged(h, {{x}}, {{Tensor::zeros(s)}},
                  [&](const auto& in, auto& out) { cpu().sum_to_shape(in[0], out[0]); });
}

TEST_P(HalfKernels, SumSquaresAndAllFiniteReadHalfDirectly) {
  const DType h = GetParam();
  const Tensor x = randn({1000}, 8, 0.0, 3.0).to(h);
  double want = 0.0;
  for (double v : x.to_vector()) want += v * v;  // to_vector converts each element exactly
  EXPECT_NEAR(cpu().sum_squares(x), want, 1e-12 * want);
  EXPECT_EQ(cpu().sum_squares(x), cpu().sum_squares(x.to(DType::F32)));
  EXPECT_TRUE(cpu().all_finite(x));
  for (double bad : {std::numeric_limits<double>::infinity(), std::nan("")}) {
    std::vector<double> v = x.to_vector();
    v[617] = bad;
    EXPECT_FALSE(cpu().all_finite(Tensor::from_vector(v, {1000}, h)));
  }
  // The largest finite value of each type is finite; float16 overflows to inf above 65504.
  EXPECT_TRUE(cpu().all_finite(Tensor::full({3}, h == DType::F16 ? 65504.0 : 3.0e38, h)));
  if (h == DType::F16) {
    EXPECT_FALSE(cpu().all_finite(Tensor::full({3}, 65520.0, h)));
  }
}

// Softmax reads half itself (a float32 row buffer per thread, core/cpu/cpu_softmax.cpp), under the
// same rule: plain, causal, windowed, with attention's scale folded in, forward and backward.
TEST_P(HalfKernels, SoftmaxPlainCausalWindowedAndScaled) {
  const DType h = GetParam();
  const std::vector<SoftmaxArgs> variants{
      {}, {.causal = true}, {.causal = true, .window = 2}, {.causal = true, .window = 2, .scale = 0.35}};
  for (const SoftmaxArgs& args : variants) {
    SCOPED_TRACE(::testing::Message() << "causal " << args.causal << " window " << args.window << " scale "
                                      << args.scale);
    const Tensor x = randn({2, 6, 6}, 9, 0.0, 3.0), dy = randn({2, 6, 6}, 10);
    expect_staged(h, {{x}}, {{Tensor::zeros({2, 6, 6})}},
                  [&](const auto& in, auto& out) { cpu().softmax(args, in[0], out[0]); });
    Tensor y = Tensor::empty({2, 6, 6}, h);
    cpu().softmax(args, x.to(h), y);
    expect_staged(h, {{y.to(DType::F32)}, {dy}}, {{Tensor::zeros({2, 6, 6})}},
                  [&](const auto& in, auto& out) { cpu().softmax_backward(args.scale, in[0], in[1], out[0]); });
  }
}

TEST_P(HalfKernels, GroupNormAndBatchNorm) {
  const DType h = GetParam();
  const Tensor x = randn({6, 8}, 11, 0.5, 2.0), dy = randn({6, 8}, 12);
  const Tensor gamma = randn({8}, 13, 1.0, 0.3), beta = randn({8}, 14);
  for (bool affine : {true, false}) {
    const Tensor g = affine ? gamma : Tensor(), b = affine ? beta : Tensor();
    // group norm: stats (rows, groups); the backward reads the forward's rounded stats.
    expect_staged(h, {{x}, {g}, {b}}, {{Tensor::zeros({6, 8})}, {Tensor::zeros({6, 2})}, {Tensor::zeros({6, 2})}},
                  [&](const auto& in, auto& out) {
                    cpu().group_norm_forward(in[0], in[1], in[2], 2, 1e-5, out[0], out[1], out[2]);
                  });
    Tensor y = Tensor::empty({6, 8}, h), m = Tensor::empty({6, 2}, h), r = Tensor::empty({6, 2}, h);
    cpu().group_norm_forward(x.to(h), g.defined() ? g.to(h) : g, Tensor(), 2, 1e-5, y, m, r);
    expect_staged(h, {{x}, {g}, {dy}, {m.to(DType::F32)}, {r.to(DType::F32)}},
                  {{Tensor::zeros({6, 8})}, {affine ? Tensor::zeros({8}) : Tensor()}, {affine ? Tensor::zeros({8}) : Tensor()}},
                  [&](const auto& in, auto& out) {
                    cpu().group_norm_backward(in[2], in[0], in[1], in[3], in[4], 2, out[0], out[1], out[2]);
                  });
    expect_staged(h, {{x}, {g}, {b}}, {{Tensor::zeros({6, 8})}, {Tensor::zeros({8})}, {Tensor::zeros({8})}},
                  [&](const auto& in, auto& out) {
                    cpu().batch_norm_forward(in[0], in[1], in[2], 1e-5, out[0], out[1], out[2]);
                  });
    Tensor bm = Tensor::empty({8}, h), br = Tensor::empty({8}, h);
    cpu().batch_norm_forward(x.to(h), g.defined() ? g.to(h) : g, Tensor(), 1e-5, y, bm, br);
    expect_staged(h, {{x}, {g}, {dy}, {bm.to(DType::F32)}, {br.to(DType::F32)}},
                  {{Tensor::zeros({6, 8})}, {affine ? Tensor::zeros({8}) : Tensor()}, {affine ? Tensor::zeros({8}) : Tensor()}},
                  [&](const auto& in, auto& out) {
                    cpu().batch_norm_backward(in[2], in[0], in[1], in[3], in[4], out[0], out[1], out[2]);
                  });
  }
}

TEST_P(HalfKernels, EmbeddingForwardAndBackwardAccumulate) {
  const DType h = GetParam();
  const Tensor ids = Tensor::from_ints({3, 0, 3, 4, 3, 1}, {6});
  expect_staged(h, {{randn({5, 7}, 15)}}, {{Tensor::zeros({6, 7})}},
                [&](const auto& in, auto& out) { cpu().embedding_forward(in[0], ids, out[0]); });
  // dweight starts non-zero: the backward adds into it, and repeated ids sum.
  expect_staged(h, {{randn({6, 7}, 16)}}, {{randn({5, 7}, 17)}},
                [&](const auto& in, auto& out) { cpu().embedding_backward(ids, in[0], out[0]); });
}

TEST_P(HalfKernels, CrossEntropyWithFloat32OrHalfLse) {
  const DType h = GetParam();
  const Tensor logits = randn({5, 11}, 18, 0.0, 2.0);
  const Tensor targets = Tensor::from_ints({2, -1, 10, 0, 7}, {5});
  for (bool lse_float32 : {true, false}) {
    double loss_h = 0.0, loss_f = 0.0;
    expect_staged(h, {{logits}}, {{Tensor::zeros({5}), lse_float32}}, [&](const auto& in, auto& out) {
      const double loss = cpu().cross_entropy_forward(in[0], targets, -1, out[0]);
      (in[0].dtype() == DType::F32 ? loss_f : loss_h) = loss;
    });
    EXPECT_EQ(loss_h, loss_f);  // the loss is a double from the float32 kernel
    Tensor lse = Tensor::empty({5}, lse_float32 ? DType::F32 : h);
    cpu().cross_entropy_forward(logits.to(h), targets, -1, lse);
    expect_staged(h, {{logits}, {lse.to(DType::F32), lse_float32}}, {{Tensor::zeros({5, 11})}},
                  [&](const auto& in, auto& out) {
                    cpu().cross_entropy_backward(in[0], targets, -1, in[1], 0.25, out[0]);
                  });
  }
}

TEST_P(HalfKernels, DropoutMaskAndCopyColumns) {
  const DType h = GetParam();
  expect_staged(h, {}, {{Tensor::zeros({300})}},
                [&](const auto&, auto& out) { cpu().dropout_mask(42, 0.3, out[0]); });
  expect_staged(h, {{randn({4, 6}, 19)}}, {{randn({4, 9}, 20)}},
                [&](const auto& in, auto& out) { cpu().copy_columns(in[0], 1, out[0], 3, 4); });
}

TEST_P(HalfKernels, MixedDtypesAndHalfParametersAreRefused) {
  const DType h = GetParam();
  const DType other = h == DType::BF16 ? DType::F16 : DType::BF16;
  Tensor out = Tensor::zeros({3}, h);
  EXPECT_THROW(cpu().binary(BinaryOp::Add, Tensor::zeros({3}, h), Tensor::zeros({3}, other), out), Error);
  EXPECT_THROW(cpu().binary(BinaryOp::Add, Tensor::zeros({3}, h), Tensor::zeros({3}, DType::F64), out), Error);
  Tensor p = Tensor::zeros({3}, h), m = Tensor::zeros({3}, h), v = Tensor::zeros({3}, h);
  try {
    cpu().adam_step(AdamArgs{1e-3, 0.9, 0.999, 1e-8, 0.0, 1, true}, p, p, m, v);
    FAIL() << "adam accepted half parameters";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[adam]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("float32 master weights"), std::string::npos) << e.what();
  }
  Tensor none;
  EXPECT_THROW(cpu().sgd_step(0.1, 0.0, 0.0, p, p, none), Error);
}

INSTANTIATE_TEST_SUITE_P(, HalfKernels, ::testing::Values(DType::BF16, DType::F16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace normlab
