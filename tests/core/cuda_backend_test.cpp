// The CUDA backend's kernels against the CPU backend's, one kernel family at a time, on the same
// inputs: memory and copies, elementwise and broadcasting paths, reductions, GEMM transposes and
// batches, softmax, embedding, cross-entropy, dropout (bit for bit), the optimizer updates, and
// the norms on bfloat16/float16 storage.
// (The differentiable ops, norms included, are compared through the op registry in
// tests/autograd/cuda_ops_test.cpp.) Every test is skipped, with the reason, without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/backend.h"
#include "core/norm_ops.h"
#include "core/ops.h"
#include "core/random.h"
#include "cuda_test_util.h"

namespace normlab {
namespace {

TEST(CudaBackend, AllocatorReusesFreedBlocksAndTrims) {
  SKIP_WITHOUT_CUDA();
  const void* first = nullptr;
  {
    Tensor t = Tensor::empty({1000}, DType::F32, kCuda);
    first = t.raw_data();
  }
  Tensor again = Tensor::empty({1000}, DType::F32, kCuda);  // same size class: the cached block
  EXPECT_EQ(again.raw_data(), first);
  { Tensor big = Tensor::empty({1 << 20}, DType::F32, kCuda); }
  EXPECT_GE(cuda_trim_cache(), size_t{4} << 20);
  EXPECT_EQ(cuda_trim_cache(), 0u);
}

TEST(CudaBackend, CopiesRoundTripAndConvert) {
  SKIP_WITHOUT_CUDA();
  const Tensor x = random({3, 4, 5}, 1);
  EXPECT_EQ(x.to(kCuda).to(Device::cpu()).to_vector(), x.to_vector());
  const Tensor ids = Tensor::from_ints({3, -1, 7, 0, 2, 9}, {2, 3});
  EXPECT_EQ(ids.to(kCuda).to_ints(), ids.to_ints());
  // transposed views copied on the device (strided kernel), with and without dtype conversion
  const Tensor view = x.transpose(0, 2);
  expect_close(x.to(kCuda).transpose(0, 2).to(DType::F64), view.to(DType::F64), 0.0, "transpose to f64");
  expect_close(x.to(kCuda).transpose(0, 2).contiguous(), view.contiguous(), 0.0, "transpose");
  expect_close(ids.to(kCuda).transpose(0, 1).contiguous().to(DType::F32), ids.transpose(0, 1).contiguous().to(DType::F32),
               0.0, "int32 -> float32");
  Tensor filled = Tensor::full({7}, 5.0, DType::I32, kCuda);
  EXPECT_EQ(filled.to_ints(), std::vector<int32_t>(7, 5));
  // narrow_last / pad_last (copy_columns)
  expect_close(ops::narrow_last(x.to(kCuda), 1, 3), ops::narrow_last(x, 1, 3), 0.0, "narrow_last");
  expect_close(ops::pad_last(x.to(kCuda), 2, 9), ops::pad_last(x, 2, 9), 0.0, "pad_last");
}

TEST(CudaBackend, UnaryOpsAndDerivativesMatchCpu) {
  SKIP_WITHOUT_CUDA();
  for (DType dtype : {DType::F32, DType::F64}) {
    for (UnaryOp op : {UnaryOp::Neg, UnaryOp::Exp, UnaryOp::Log, UnaryOp::Sqrt, UnaryOp::Square, UnaryOp::Tanh,
                       UnaryOp::Relu, UnaryOp::Gelu, UnaryOp::Silu, UnaryOp::Scale, UnaryOp::AddScalar}) {
      const bool positive = op == UnaryOp::Log || op == UnaryOp::Sqrt;
      const Tensor x = random({7, 300}, 2, dtype, positive ? 6.0 : 0.0);
      const Tensor dy = random({7, 300}, 3, dtype);
      const std::string what = std::string(dtype_name(dtype)) + " unary op " + std::to_string(static_cast<int>(op));
      const Tensor y = ops::unary(op, x, 0.37);
      const Tensor yg = ops::unary(op, x.to(kCuda), 0.37);
      // CPU float32 exp/tanh use a fast polynomial (core/cpu/fast_math.h): a few ulp more room
      const double tol = dtype == DType::F32 ? 2e-6 : 1e-12;
      expect_close(yg, y, tol, what);
      expect_close(ops::unary_backward(op, x.to(kCuda), yg, dy.to(kCuda), 0.37), ops::unary_backward(op, x, y, dy, 0.37),
                   tol, what + " backward");
    }
  }
}

TEST(CudaBackend, BinaryBroadcastPathsMatchCpu) {
  SKIP_WITHOUT_CUDA();
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{4, 5}, {4, 5}},          // same shape
      {{3, 4, 5}, {5}},          // b repeats over rows (bias)
      {{5}, {3, 4, 5}},          // a repeats
      {{}, {3, 4}},              // scalar a
      {{3, 4}, {}},              // scalar b
      {{2, 1, 4}, {3, 1}},       // both broadcast
      {{3, 1, 5}, {3, 4, 1}},    // general
      {{2, 1, 3, 1, 2}, {3, 4, 1}}};  // rank 5: (2, 1, 3, 4, 2)
  for (DType dtype : {DType::F32, DType::F64})
    for (const auto& [sa, sb] : shapes)
      for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div}) {
        const Tensor a = random(sa, 4, dtype), b = random(sb, 5, dtype, 3.0);
        expect_close(ops::binary(op, a.to(kCuda), b.to(kCuda), "binary"), ops::binary(op, a, b, "binary"),
                     tol_for(dtype), shape_str(sa) + " op " + shape_str(sb));
      }
  Tensor y = random({6, 7}, 6), yg = y.to(kCuda);
  const Tensor x = random({6, 7}, 7);
  ops::axpy_(-0.5, x, y);
  ops::axpy_(-0.5, x.to(kCuda), yg);
  expect_close(yg, y, 1e-6, "axpy");
}

TEST(CudaBackend, ReductionsMatchCpu) {
  SKIP_WITHOUT_CUDA();
  for (DType dtype : {DType::F32, DType::F64}) {
    const Tensor x = random({4, 5, 6}, 8, dtype);
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max})
      for (int axis : {0, 1, 2})
        expect_close(ops::reduce(op, x.to(kCuda), axis), ops::reduce(op, x, axis), tol_for(dtype),
                     "reduce axis " + std::to_string(axis));
    const Tensor long_row = random({2, 100000}, 9, dtype);
    expect_close(ops::reduce(ReduceOp::Sum, long_row.to(kCuda), 1), ops::reduce(ReduceOp::Sum, long_row, 1),
                 tol_for(dtype), "long rows");
    for (const Shape& to : {Shape{6}, Shape{5, 6}, Shape{4, 1, 6}, Shape{5, 1}, Shape{1}, Shape{4, 1, 1}, Shape{}})
      expect_close(ops::sum_to(x.to(kCuda), to), ops::sum_to(x, to), tol_for(dtype), "sum_to " + shape_str(to));
    const Tensor tall = random({3000, 40}, 10, dtype);  // many row chunks
    expect_close(ops::sum_to(tall.to(kCuda), {40}), ops::sum_to(tall, {40}), tol_for(dtype), "sum_to tall");
    const Tensor big = random({1000, 777}, 11, dtype);
    EXPECT_NEAR(ops::sum_squares(big.to(kCuda)), ops::sum_squares(big), 1e-9 * ops::sum_squares(big));
  }
  Tensor bad = random({1000}, 12);
  EXPECT_TRUE(ops::all_finite(bad.to(kCuda)));
  std::vector<double> v = bad.to_vector();
  v[517] = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(ops::all_finite(Tensor::from_vector(v, {1000}).to(kCuda)));
  v[517] = std::nan("");
  EXPECT_FALSE(ops::all_finite(Tensor::from_vector(v, {1000}).to(kCuda)));
}

TEST(CudaBackend, GemmTransposesAndBatchesMatchCpu) {
  SKIP_WITHOUT_CUDA();
  for (DType dtype : {DType::F32, DType::F64}) {
    const double tol = dtype == DType::F64 ? 1e-12 : 1e-5;
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        const Tensor a = random(ta ? Shape{23, 37} : Shape{37, 23}, 13, dtype);
        const Tensor b = random(tb ? Shape{19, 23} : Shape{23, 19}, 14, dtype);
        expect_close(ops::matmul(a.to(kCuda), b.to(kCuda), ta, tb), ops::matmul(a, b, ta, tb), tol, "2-d");
        const Tensor ab = random(ta ? Shape{3, 23, 37} : Shape{3, 37, 23}, 15, dtype);
        const Tensor bb = random(tb ? Shape{3, 19, 23} : Shape{3, 23, 19}, 16, dtype);
        expect_close(ops::matmul(ab.to(kCuda), bb.to(kCuda), ta, tb), ops::matmul(ab, bb, ta, tb), tol, "batched");
        // a 2-d b shared by the batch (stride 0 when a is transposed; folded rows when not)
        expect_close(ops::matmul(ab.to(kCuda), b.to(kCuda), ta, tb), ops::matmul(ab, b, ta, tb), tol, "shared");
      }
  }
}

// bfloat16/float16 GEMM (cublasGemmEx, float32 compute) against the CPU's (oneDNN or the float32
// fallback), through the backends directly: a batch with B shared (stride 0), alpha and beta.
// Both accumulate in float32 and round once; the orders differ, so allow two units of the half type.
TEST(CudaBackend, HalfGemmMatchesCpu) {
  SKIP_WITHOUT_CUDA();
  for (DType dtype : {DType::BF16, DType::F16}) {
    const double tol = dtype == DType::BF16 ? std::ldexp(1.0, -7) : std::ldexp(1.0, -10);
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        GemmArgs g;
        g.trans_a = ta;
        g.trans_b = tb;
        g.batch = 3;
        g.m = 37;
        g.n = 19;
        g.k = 23;
        g.stride_a = g.m * g.k;
        g.stride_b = 0;
        g.stride_c = g.m * g.n;
        g.alpha = 0.5;
        g.beta = 1.5;
        const Tensor a = random({3, g.m * g.k}, 21).to(dtype), b = random({g.k * g.n}, 22).to(dtype);
        Tensor c_cpu = random({3, g.m * g.n}, 23).to(dtype);
        Tensor c_gpu = c_cpu.to(kCuda);
        cpu_backend().gemm(g, a, b, c_cpu);
        backend_for(kCuda).gemm(g, a.to(kCuda), b.to(kCuda), c_gpu);
        expect_close(c_gpu, c_cpu, tol, std::string(dtype_name(dtype)) + (ta ? " t" : " n") + (tb ? "t" : "n"));
      }
  }
}

TEST(CudaBackend, SoftmaxMatchesCpu) {
  SKIP_WITHOUT_CUDA();
  for (const Shape& shape : {Shape{5, 1}, Shape{4, 33}, Shape{2, 3, 70, 70}, Shape{3, 3000}}) {
    const Tensor x = random(shape, 17), dy = random(shape, 18);
    const std::vector<SoftmaxArgs> variants{{}, {.causal = true}, {.causal = true, .window = 5, .scale = 0.125}};
    for (const SoftmaxArgs& args : variants) {
      if (args.causal && shape[shape.size() - 2] != shape.back()) continue;
      const Tensor y = ops::softmax(x, args), yg = ops::softmax(x.to(kCuda), args);
      expect_close(yg, y, 2e-6, "softmax " + shape_str(shape));
      expect_close(ops::softmax_backward(yg, dy.to(kCuda), args.scale), ops::softmax_backward(y, dy, args.scale),
                   2e-6, "softmax backward");
    }
  }
}

// Share of elements bitwise equal in two tensors of the same shape.
double share_equal(const Tensor& gpu, const Tensor& cpu) {
  const std::vector<double> a = gpu.to_vector(), b = cpu.to_vector();
  size_t same = 0;
  for (size_t i = 0; i < b.size(); ++i) same += a[i] == b[i];
  return b.empty() ? 1.0 : static_cast<double>(same) / static_cast<double>(b.size());
}

// LayerNorm and RMSNorm (both cast orders) on bfloat16/float16 storage: float32 statistics, and
// outputs within one 16-bit ulp of the CPU kernels' and nearly all bitwise equal (both compute in
// float32 and round once at the same points; the GPU sums in float32 where the CPU uses double).
TEST(CudaBackend, HalfPrecisionNormsMatchCpu) {
  SKIP_WITHOUT_CUDA();
  for (const DType dt : {DType::BF16, DType::F16}) {
    const double ulp = dt == DType::BF16 ? 1.0 / 128 : 1.0 / 1024;  // at magnitude 1..2
    const Tensor x = random({6, 96}, 31, DType::F64, 0.3).to(dt), dy = random({6, 96}, 32, DType::F64).to(dt);
    const Tensor w = random({96}, 33, DType::F64, 1.0).to(dt), b = random({96}, 34, DType::F64).to(dt);
    const Tensor xg = x.to(kCuda), dyg = dy.to(kCuda), wg = w.to(kCuda), bg = b.to(kCuda);
    const std::string name(dtype_name(dt));
    const ops::NormForward f = ops::layer_norm(x, w, b, 1e-5), fg = ops::layer_norm(xg, wg, bg, 1e-5);
    ASSERT_EQ(fg.mean.dtype(), DType::F32);
    ASSERT_EQ(fg.rstd.dtype(), DType::F32);
    expect_close(fg.rstd, f.rstd, 2e-6, "layer_norm rstd " + name);
    expect_close(fg.y, f.y, 2 * ulp, "layer_norm y " + name);
    EXPECT_GE(share_equal(fg.y, f.y), 0.9) << name;
    const ops::NormBackward d = ops::layer_norm_backward(dy, x, w, f, true, true);
    const ops::NormBackward dg = ops::layer_norm_backward(dyg, xg, wg, fg, true, true);
    expect_close(dg.dx, d.dx, 2 * ulp, "layer_norm dx " + name);
    expect_close(dg.dgamma, d.dgamma, 2 * ulp, "layer_norm dgamma " + name);
    expect_close(dg.dbeta, d.dbeta, 2 * ulp, "layer_norm dbeta " + name);
    for (const bool unit_offset : {false, true}) {
      const std::string what = name + (unit_offset ? " gemma" : " llama");
      const ops::NormForward r = ops::rms_norm(x, w, 1e-6, unit_offset), rg = ops::rms_norm(xg, wg, 1e-6, unit_offset);
      ASSERT_EQ(rg.rstd.dtype(), DType::F32);
      expect_close(rg.y, r.y, 2 * ulp, "rms_norm y " + what);
      EXPECT_GE(share_equal(rg.y, r.y), 0.9) << what;  // the two orders differ on more (half_norm_test)
      const ops::NormBackward rd = ops::rms_norm_backward(dy, x, w, r, unit_offset, true);
      const ops::NormBackward rdg = ops::rms_norm_backward(dyg, xg, wg, rg, unit_offset, true);
      expect_close(rdg.dx, rd.dx, 2 * ulp, "rms_norm dx " + what);
      expect_close(rdg.dgamma, rd.dgamma, 2 * ulp, "rms_norm dweight " + what);
    }
  }
}

TEST(CudaBackend, EmbeddingGatherScatterAndRangeError) {
  SKIP_WITHOUT_CUDA();
  const Tensor weight = random({50, 70}, 19);
  std::vector<int32_t> id_values;
  Generator gen(20);
  for (int i = 0; i < 600; ++i) id_values.push_back(static_cast<int32_t>(gen.below(12)));  // many repeats
  const Tensor ids = Tensor::from_ints(id_values, {20, 30});
  expect_close(ops::embedding(weight.to(kCuda), ids), ops::embedding(weight, ids), 0.0, "gather");
  const Tensor dy = random({600, 70}, 21);
  Tensor dw = random({50, 70}, 22), dwg = dw.to(kCuda);  // accumulates into existing values
  cpu_backend().embedding_backward(ids.reshape({600}), dy, dw);
  backend_for(kCuda).embedding_backward(ids.reshape({600}).to(kCuda), dy.to(kCuda), dwg);
  expect_close(dwg, dw, 0.0, "scatter-add (same order of additions as the CPU)");
  const Tensor bad = Tensor::from_ints({1, 2, 50, 3}, {4});
  try {
    ops::embedding(weight.to(kCuda), bad);
    FAIL() << "an id outside the vocabulary did not throw";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "[embedding] id 50 at position 2 is outside [0, 50)");
  }
}

TEST(CudaBackend, CrossEntropyMatchesCpu) {
  SKIP_WITHOUT_CUDA();
  for (DType dtype : {DType::F32, DType::F64}) {
    const Tensor logits = random({40, 1001}, 23, dtype);
    std::vector<int32_t> t;
    Generator gen(24);
    for (int i = 0; i < 40; ++i) t.push_back(i % 7 == 3 ? -1 : static_cast<int32_t>(gen.below(1001)));
    const Tensor targets = Tensor::from_ints(t, {40});
    Tensor lse = Tensor::empty({40}, dtype), lse_g = Tensor::empty({40}, dtype, kCuda);
    const double loss = cpu_backend().cross_entropy_forward(logits, targets, -1, lse);
    const double loss_g = backend_for(kCuda).cross_entropy_forward(logits.to(kCuda), targets.to(kCuda), -1, lse_g);
    EXPECT_NEAR(loss_g, loss, 1e-6 * std::abs(loss));
    expect_close(lse_g, lse, 1e-6, "lse");
    Tensor d = Tensor::empty(logits.shape(), dtype), dg = Tensor::empty(logits.shape(), dtype, kCuda);
    cpu_backend().cross_entropy_backward(logits, targets, -1, lse, 0.25, d);
    backend_for(kCuda).cross_entropy_backward(logits.to(kCuda), targets.to(kCuda), -1, lse_g, 0.25, dg);
    expect_close(dg, d, 1e-6, "dlogits");
  }
  const Tensor all_ignored = Tensor::from_ints({-1, -1}, {2});
  Tensor lse = Tensor::empty({2}, DType::F32, kCuda);
  EXPECT_EQ(backend_for(kCuda).cross_entropy_forward(random({2, 5}, 25).to(kCuda), all_ignored.to(kCuda), -1, lse), 0.0);
  try {
    backend_for(kCuda).cross_entropy_forward(random({3, 5}, 26).to(kCuda), Tensor::from_ints({0, 7, 9}, {3}).to(kCuda),
                                             -1, lse);
    FAIL() << "a target outside the vocabulary did not throw";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "[cross_entropy] target 7 at row 1 is outside [0, 5)");
  }
}

TEST(CudaBackend, DropoutMaskIsBitIdenticalToCpu) {
  SKIP_WITHOUT_CUDA();
  for (DType dtype : {DType::F32, DType::F64}) {
    Tensor mask = Tensor::empty({1000, 37}, dtype), mask_g = Tensor::empty({1000, 37}, dtype, kCuda);
    cpu_backend().dropout_mask(987654321ull, 0.2, mask);
    backend_for(kCuda).dropout_mask(987654321ull, 0.2, mask_g);
    EXPECT_EQ(mask_g.to_vector(), mask.to_vector());
  }
}

TEST(CudaBackend, OptimizerStepsMatchCpu) {
  SKIP_WITHOUT_CUDA();
  for (DType dtype : {DType::F32, DType::F64}) {
    const double tol = dtype == DType::F64 ? 1e-12 : 1e-6;
    for (int variant = 0; variant < 6; ++variant) {
      Tensor p = random({300}, 27, dtype), m = Tensor::zeros({300}, dtype), v = Tensor::zeros({300}, dtype);
      Tensor pg = p.to(kCuda), mg = m.to(kCuda), vg = v.to(kCuda);
      for (int64_t step = 1; step <= 3; ++step) {
        const Tensor g = random({300}, 28 + step, dtype), gg = g.to(kCuda);
        if (variant < 2) {
          const AdamArgs a{1e-2, 0.9, 0.99, 1e-8, 0.1, step, variant == 1};
          cpu_backend().adam_step(a, p, g, m, v);
          backend_for(kCuda).adam_step(a, pg, gg, mg, vg);
        } else if (variant < 4) {
          const RAdamArgs a{1e-2, 0.9, 0.999, 1e-8, 0.01, step, variant == 3 ? 0.7 : 0.0};
          cpu_backend().radam_step(a, p, g, m, v);
          backend_for(kCuda).radam_step(a, pg, gg, mg, vg);
        } else {
          Tensor none;
          const double momentum = variant == 5 ? 0.9 : 0.0;
          cpu_backend().sgd_step(0.1, momentum, 0.01, p, g, variant == 5 ? m : none);
          backend_for(kCuda).sgd_step(0.1, momentum, 0.01, pg, gg, variant == 5 ? mg : none);
        }
      }
      const std::string what = "optimizer variant " + std::to_string(variant);
      expect_close(pg, p, tol, what + " param");
      expect_close(mg, m, tol, what + " first moment / momentum");
      if (variant < 4) expect_close(vg, v, tol, what + " second moment");
    }
  }
}

TEST(CudaBackend, WithoutADeviceCudaTensorsFailClearly) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: this checks the message without one";
  try {
    Tensor::zeros({2}, DType::F32, kCuda);
    FAIL() << "allocating on cuda without a device did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[cuda] ", 0), 0u) << e.what();
  }
  EXPECT_EQ(cuda_trim_cache(), 0u);
}

}  // namespace
}  // namespace normlab
