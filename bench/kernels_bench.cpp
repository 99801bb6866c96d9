// Micro-benchmarks of the kernels a training step spends its time in (Google Benchmark):
//   build/bench_kernels [--threads=N] [--benchmark_filter=REGEX] [...]   (threads default 1)
//
// GEMM at the model shapes, ops::matmul against cblas_sgemm called directly on the same buffers
// (the difference is normlab's checks, allocation and dispatch). Shapes (M, N, K): M = B*T rows,
// a Linear layer (in K, out N); variant 0 fwd: Y = X W^T (M,K)(N,K)^T, 1 dx: dX = dY W (M,N)(N,K),
// 2 dw: dW = dY^T X (N,M)(M,K). Counter GFLOPs (per second) = 2 M N K per call.
//
// LayerNorm and RMSNorm forward / backward at (8192, 1024) float32, counter GB (per second) over the bytes a
// kernel must move at least (R rows, C columns, 4-byte floats):
//   layer_norm fwd  read x, gamma, beta; write y, mean, rstd        8RC + 8C + 8R
//   layer_norm bwd  read dy, x, gamma, mean, rstd; write dx, dgamma, dbeta   12RC + 12C + 8R
//   rms_norm fwd    read x, w; write y, rstd                         8RC + 4C + 4R
//   rms_norm bwd    read dy, x, w, rstd; write dx, dw                12RC + 8C + 4R
// and memcpy moving the same number of bytes (a copy of n bytes reads n and writes n: counted 2n) on
// the same number of threads, the bandwidth ceiling to compare with.
//
// Causal attention core (B 8, H 8, T 256, D 64): softmax(q k^T / sqrt(D)) v through the autograd
// ops as nn/attention.cpp calls them, forward only and forward + backward, float32 and (forward +
// backward) bfloat16 under autocast. GFLOP/s over 4 B H T^2 D (forward) and 12 B H T^2 D
// (forward + backward), counting the masked upper triangle in full, as the kernels compute it.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "autograd/autocast.h"
#include "autograd/ops.h"
#include "core/cpu/blas_core.h"
#include "core/backend.h"
#include "core/norm_ops.h"
#include "core/ops.h"
#include "core/random.h"

namespace normlab {
namespace {

Tensor random_tensor(const Shape& shape, uint64_t seed) {
  Generator gen(seed);
  return Tensor::randn(shape, gen);
}

// Counters are rates over wall time (every benchmark uses real time: the kernels are multi-threaded),
// printed as "GFLOPs=92.6/s", "GB=14.3/s".
benchmark::Counter rate(double per_iteration) {
  return benchmark::Counter(per_iteration, benchmark::Counter::kIsIterationInvariantRate);
}

// ---- GEMM ----
enum Variant { kForward = 0, kInputGrad = 1, kWeightGrad = 2 };

struct GemmOperands {
  Tensor a, b;
  bool trans_a, trans_b;
};

GemmOperands gemm_operands(int64_t m, int64_t n, int64_t k, int variant) {
  if (variant == kForward) return {random_tensor({m, k}, 1), random_tensor({n, k}, 2), false, true};
  if (variant == kInputGrad) return {random_tensor({m, n}, 1), random_tensor({n, k}, 2), false, false};
  return {random_tensor({m, n}, 1), random_tensor({m, k}, 2), true, false};  // (N,M)(M,K) -> (N,K)
}

void set_gemm_label(benchmark::State& state, int variant) {
  static const char* names[] = {"fwd  X W^T", "dx   dY W", "dw   dY^T X"};
  state.SetLabel(names[variant]);
}

void BM_gemm_normlab(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const int variant = static_cast<int>(state.range(3));
  const GemmOperands g = gemm_operands(m, n, k, variant);
  for (auto _ : state) benchmark::DoNotOptimize(ops::matmul(g.a, g.b, g.trans_a, g.trans_b));
  state.counters["GFLOPs"] = rate(2.0 * m * n * k * 1e-9);
  set_gemm_label(state, variant);
}

void BM_gemm_cblas(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const int variant = static_cast<int>(state.range(3));
  const GemmOperands g = gemm_operands(m, n, k, variant);
  // op(A) (rows, inner) @ op(B) (inner, cols), row-major.
  const int64_t rows = variant == kWeightGrad ? n : m, cols = variant == kForward ? n : k;
  const int64_t inner = variant == kForward ? k : (variant == kInputGrad ? n : m);
  Tensor c = Tensor::empty({rows, cols});
  const float* a = g.a.data<float>();
  const float* b = g.b.data<float>();
  float* out = c.data<float>();
  const int lda = static_cast<int>(g.a.size(1)), ldb = static_cast<int>(g.b.size(1));
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans, g.trans_b ? CblasTrans : CblasNoTrans,
                static_cast<int>(rows), static_cast<int>(cols), static_cast<int>(inner), 1.0f, a, lda, b, ldb,
                0.0f, out, static_cast<int>(cols));
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPs"] = rate(2.0 * m * n * k * 1e-9);
  set_gemm_label(state, variant);
}

// (M, N, K) of every Linear layer in the benchmark configs, times the three GEMMs of each.
void gemm_shapes(benchmark::internal::Benchmark* b) {
  const std::vector<std::vector<int64_t>> shapes = {
      {768, 128, 128},   {768, 512, 128},   {768, 128, 512},  {768, 65, 128},     // char_small, deep_narrow
      {2048, 512, 512},  {2048, 2048, 512}, {2048, 512, 2048},                    // mid
      {256, 768, 768},   {256, 3072, 768},  {256, 768, 3072}, {256, 50257, 768},  // gpt2_124m
  };
  for (const auto& s : shapes)
    for (int variant = 0; variant < 3; ++variant) b->Args({s[0], s[1], s[2], variant});
  b->ArgNames({"M", "N", "K", "variant"})->Unit(benchmark::kMicrosecond)->UseRealTime();
}

BENCHMARK(BM_gemm_normlab)->Apply(gemm_shapes);
BENCHMARK(BM_gemm_cblas)->Apply(gemm_shapes);

// ---- normalization ----
constexpr int64_t kRows = 8192, kCols = 1024;
constexpr double kRC = static_cast<double>(kRows * kCols);

void BM_layer_norm_forward(benchmark::State& state) {
  const Tensor x = random_tensor({kRows, kCols}, 3), gamma = Tensor::ones({kCols}), beta = Tensor::zeros({kCols});
  for (auto _ : state) benchmark::DoNotOptimize(ops::layer_norm(x, gamma, beta, 1e-5));
  state.counters["GB"] = rate((8 * kRC + 8 * kCols + 8 * kRows) * 1e-9);
}

void BM_layer_norm_backward(benchmark::State& state) {
  const Tensor x = random_tensor({kRows, kCols}, 3), dy = random_tensor({kRows, kCols}, 4);
  const Tensor gamma = Tensor::ones({kCols}), beta = Tensor::zeros({kCols});
  const ops::NormForward saved = ops::layer_norm(x, gamma, beta, 1e-5);
  for (auto _ : state) benchmark::DoNotOptimize(ops::layer_norm_backward(dy, x, gamma, saved, true, true));
  state.counters["GB"] = rate((12 * kRC + 12 * kCols + 8 * kRows) * 1e-9);
}

void BM_rms_norm_forward(benchmark::State& state) {
  const Tensor x = random_tensor({kRows, kCols}, 3), weight = Tensor::ones({kCols});
  for (auto _ : state) benchmark::DoNotOptimize(ops::rms_norm(x, weight, 1e-6, false));
  state.counters["GB"] = rate((8 * kRC + 4 * kCols + 4 * kRows) * 1e-9);
}

void BM_rms_norm_backward(benchmark::State& state) {
  const Tensor x = random_tensor({kRows, kCols}, 3), dy = random_tensor({kRows, kCols}, 4);
  const Tensor weight = Tensor::ones({kCols});
  const ops::NormForward saved = ops::rms_norm(x, weight, 1e-6, false);
  for (auto _ : state) benchmark::DoNotOptimize(ops::rms_norm_backward(dy, x, weight, saved, false, true));
  state.counters["GB"] = rate((12 * kRC + 8 * kCols + 4 * kRows) * 1e-9);
}

// Copies state.range(0) / 2 bytes: moves (reads + writes) state.range(0) bytes. The copy is split
// into one contiguous slice per thread (normlab's thread count), so the ceiling is measured with
// the same number of cores as the kernels it is compared with.
void BM_memcpy_same_bytes(benchmark::State& state) {
  const size_t half = static_cast<size_t>(state.range(0)) / 2;
  std::vector<char> src(half, 1), dst(half);
  const int threads = num_threads();
  const size_t slice = (half + threads - 1) / threads;
  for (auto _ : state) {
#pragma omp parallel for num_threads(threads)
    for (int t = 0; t < threads; ++t) {
      const size_t begin = std::min(half, t * slice), end = std::min(half, begin + slice);
      std::memcpy(dst.data() + begin, src.data() + begin, end - begin);
    }
    benchmark::ClobberMemory();
  }
  state.counters["GB"] = rate(static_cast<double>(2 * half) * 1e-9);
}

BENCHMARK(BM_layer_norm_forward)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_layer_norm_backward)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_rms_norm_forward)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_rms_norm_backward)->Unit(benchmark::kMillisecond)->UseRealTime();
// The forward's 8RC and the backward's 12RC bytes (the small terms aside).
BENCHMARK(BM_memcpy_same_bytes)
    ->Arg(8 * kRows * kCols)
    ->Arg(12 * kRows * kCols)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// ---- attention core ----
constexpr int64_t kB = 8, kH = 8, kT = 256, kD = 64;
constexpr double kAttnFlops = 4.0 * kB * kH * kT * kT * kD;  // forward: q k^T and p v

Var attention_core(const Var& q, const Var& k, const Var& v) {
  const Var probs = causal_softmax(matmul(q, k, false, true), 0, 1.0 / std::sqrt(static_cast<double>(kD)));
  return matmul(probs, v);  // (B,H,T,D), as nn/attention.cpp
}

void BM_attention_forward(benchmark::State& state) {
  const Var q(random_tensor({kB, kH, kT, kD}, 5)), k(random_tensor({kB, kH, kT, kD}, 6)),
      v(random_tensor({kB, kH, kT, kD}, 7));
  NoGradGuard no_grad;
  for (auto _ : state) benchmark::DoNotOptimize(attention_core(q, k, v));
  state.counters["GFLOPs"] = rate(kAttnFlops * 1e-9);
}

void BM_attention_forward_backward(benchmark::State& state) {
  Var q = parameter(random_tensor({kB, kH, kT, kD}, 5)), k = parameter(random_tensor({kB, kH, kT, kD}, 6)),
      v = parameter(random_tensor({kB, kH, kT, kD}, 7));
  const Tensor seed = random_tensor({kB, kH, kT, kD}, 8);  // d(output): a random cotangent
  for (auto _ : state) {
    backward(attention_core(q, k, v), seed);
    q.zero_grad();
    k.zero_grad();
    v.zero_grad();
  }
  state.counters["GFLOPs"] = rate(3.0 * kAttnFlops * 1e-9);
}

// The same under bf16 autocast, as nn/attention.cpp runs it: q, k, v in bfloat16.
void BM_attention_forward_backward_bf16(benchmark::State& state) {
  Var q = parameter(random_tensor({kB, kH, kT, kD}, 5)), k = parameter(random_tensor({kB, kH, kT, kD}, 6)),
      v = parameter(random_tensor({kB, kH, kT, kD}, 7));
  const Tensor seed = random_tensor({kB, kH, kT, kD}, 8).to(DType::BF16);
  for (auto _ : state) {
    {
      AutocastGuard autocast(DType::BF16);
      backward(attention_core(normlab::autocast(q), normlab::autocast(k), normlab::autocast(v)), seed);
    }
    q.zero_grad();
    k.zero_grad();
    v.zero_grad();
  }
  state.counters["GFLOPs"] = rate(3.0 * kAttnFlops * 1e-9);
}

BENCHMARK(BM_attention_forward)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_attention_forward_backward)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_attention_forward_backward_bf16)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace normlab

// Our own flag --threads=N (default 1) is taken out before Google Benchmark reads the rest.
int main(int argc, char** argv) {
  normlab::restart_with_better_blas_core(argv);
  int threads = 1;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--threads=", 0) == 0) threads = std::stoi(arg.substr(10));
    else args.push_back(argv[i]);
  }
  normlab::set_num_threads(threads);
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  benchmark::AddCustomContext("normlab_threads", std::to_string(threads));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
