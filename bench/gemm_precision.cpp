// Half-precision GEMM against float32 sgemm at the model's Linear shapes, on the CPU:
//   build/gemm_precision [--reps N] [--threads 1,2] [--min-ms MS] [--only NAME-PART]
// Implementations, through CpuBackend::gemm (core/cpu/half_gemm.h, core/cpu/f32_gemm.h), C = op(A) op(B):
//   f32 sgemm      float32 A, B, C (OpenBLAS): the reference every ratio is taken against;
//   f32 oneDNN     float32 through oneDNN's matmul, in the backend's pieces (shown when built with
//                  oneDNN; normlab's float32 GEMMs take it where core/cpu/f32_gemm.h's probe chose it);
//   f32 BLIS       float32 through BLIS's bli_sgemm (bench/blis_sgemm.h; shown when Debian's
//                  libblis-openmp-dev is installed: measured, not used by normlab); its result is
//                  checked against sgemm's before it is timed;
//   bf16 oneDNN    bfloat16 A, B, C through oneDNN's matmul (float32 accumulation);
//   bf16 fallback  bfloat16 converted to float32, sgemm, C rounded back (what float16 runs too);
//   f16 oneDNN     float16 through oneDNN where it has a native kernel (oneDNN 2.6, Debian 12's,
//                  has no float16 matmul on the CPU at all: creating the primitive fails).
// Shapes (M, N, K): M = B*T rows through a Linear layer (in K, out N), three variants as in
// bench/kernels_bench.cpp: fwd Y = X W^T (M,K)(N,K)^T, dx dX = dY W (M,N)(N,K), dw dW = dY^T X
// (N,M)(M,K). GFLOP/s = 2 M N K / time per call. Each repetition times every implementation in
// turn on the same shape (at least --min-ms per implementation); the table shows the median time
// over repetitions and the median of the per-repetition ratios (sgemm time / this time: > 1 is
// faster than float32), so a noisy machine moves the ratios less than the absolute figures.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/cpu/blas_core.h"
#include "core/cpu/f32_gemm.h"
#include "core/cpu/half_gemm.h"
#include "blis_sgemm.h"
#include "core/random.h"

using namespace normlab;

namespace {

struct GemmShape {
  const char* name;
  int64_t m, n, k;
};

// char_small (B 12 x T 64, d_model 128, d_ff 512), mid (8 x 256, 512, 2048), GPT-2 124M
// (B*T 1024, 768, 3072): the two MLP Linears of each (the attention projections are N = K = d_model);
// and at the 256 rows of the bench config, the up-projection and the vocabulary head (N = 50257).
const std::vector<GemmShape> kShapes = {
    {"char_small up", 768, 512, 128},  {"char_small down", 768, 128, 512},
    {"mid up", 2048, 2048, 512},       {"mid down", 2048, 512, 2048},
    {"gpt2 up", 1024, 3072, 768},      {"gpt2 down", 1024, 768, 3072},
    // bench/configs/gpt2_124m.toml runs B*T = 4 x 64 = 256 rows: its MLP up-projection and tied head
    {"gpt2 up, 256 rows", 256, 3072, 768}, {"gpt2 head", 256, 50257, 768},
    // mid's attention projections: q, k and v as three (C, C) Linears, or fused as one (3C, C)
    {"mid q (or k, v)", 2048, 512, 512}, {"mid qkv fused", 2048, 1536, 512},
};

struct Impl {
  const char* name;
  DType dtype;
  HalfGemmPath path;  // for half dtypes
  F32GemmKernel f32_kernel = F32GemmKernel::Auto;  // for float32 (and the fallback's sgemm)
  const BlisSgemm* blis = nullptr;                  // float32 through BLIS instead of the backend
};

GemmOperands make_operands(const GemmShape& s, int variant, DType dtype) {
  Generator gen(3);
  return random_linear_gemm(static_cast<LinearGemm>(variant), s.m, s.k, s.n, dtype, gen);
}

// Seconds per call: calls repeated until min_seconds have passed.
double seconds_per_call(const std::function<void()>& f, double min_seconds) {
  int calls = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0.0;
  do {
    f();
    ++calls;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (elapsed < min_seconds);
  return elapsed / calls;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

std::function<void()> gemm_call(const Impl& impl, GemmOperands& o) {
  if (impl.blis) return [&impl, &o] { impl.blis->gemm(o.args, o.a, o.b, o.c); };
  return [&impl, &o] {
    set_half_gemm_path(impl.path);
    set_f32_gemm_kernel(impl.f32_kernel);
    cpu_backend().gemm(o.args, o.a, o.b, o.c);
  };
}

// Stops the bench when implementation i's C differs from implementation 0's (float32 sgemm) by more
// than float32 rounding over K terms allows: a wrong stride would otherwise be timed as a result.
void check_against_first(const std::vector<Impl>& impls, std::vector<GemmOperands>& operands, size_t i) {
  gemm_call(impls[0], operands[0])();
  gemm_call(impls[i], operands[i])();
  const float* want = operands[0].c.data<float>();
  const float* got = operands[i].c.data<float>();
  double worst = 0, scale = 0;
  for (int64_t e = 0; e < operands[0].c.numel(); ++e) {
    worst = std::max(worst, static_cast<double>(std::abs(want[e] - got[e])));
    scale = std::max(scale, static_cast<double>(std::abs(want[e])));
  }
  if (worst > 1e-4 * scale) {
    fmt::print(stderr, "gemm_precision: {} differs from {} by {} (largest |C| {})\n", impls[i].name, impls[0].name,
               worst, scale);
    std::exit(1);
  }
}

// One table row per (shape, variant, implementation).
void bench_shape(const GemmShape& s, int variant, const std::vector<Impl>& impls, int threads, int reps,
                 double min_seconds) {
  static const char* variants[] = {"fwd", "dx", "dw"};
  std::vector<GemmOperands> operands;
  for (const Impl& impl : impls) operands.push_back(make_operands(s, variant, impl.dtype));
  for (size_t i = 1; i < impls.size(); ++i)
    if (impls[i].blis) check_against_first(impls, operands, i);
  std::vector<std::vector<double>> times(impls.size());
  for (int r = 0; r < reps; ++r)
    for (size_t i = 0; i < impls.size(); ++i) {
      const auto call = gemm_call(impls[i], operands[i]);
      if (r == 0) call();  // warm-up: primitive creation, first touch
      times[i].push_back(seconds_per_call(call, min_seconds));
    }
  const double flops = 2.0 * s.m * s.n * s.k;
  for (size_t i = 0; i < impls.size(); ++i) {
    std::vector<double> ratios;
    for (int r = 0; r < reps; ++r) ratios.push_back(times[0][r] / times[i][r]);
    fmt::print("| {} ({}x{}x{}) | {} | {} | {} | {:.1f} | {:.2f} |\n", s.name, s.m, s.n, s.k, variants[variant],
               threads, impls[i].name, flops / median(times[i]) * 1e-9, median(ratios));
  }
  std::fflush(stdout);
}

std::vector<int> parse_list(const std::string& text) {
  std::vector<int> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    out.push_back(std::stoi(text.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  restart_with_better_blas_core(argv);  // OpenBLAS's own kernels for this CPU (core/cpu/blas_core.h)
  int reps = 5;
  double min_seconds = 0.2;
  std::vector<int> thread_counts{1, 2};
  std::string only;  // shapes whose name contains this
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--reps") reps = std::stoi(value);
    else if (flag == "--threads") thread_counts = parse_list(value);
    else if (flag == "--min-ms") min_seconds = std::stod(value) * 1e-3;
    else if (flag == "--only") only = value;
    else {
      fmt::print(stderr, "gemm_precision: unknown flag {} (--reps N, --threads 1,2, --min-ms MS, --only NAME)\n", flag);
      return 2;
    }
  }
  const bool bf16_native = onednn_gemm_available(DType::BF16), f16_native = onednn_gemm_available(DType::F16);
  fmt::print("OpenBLAS core {}; oneDNN native kernel: bfloat16 {}, float16 {}; {} repetitions, >= {} ms each\n\n",
             blas_core_name(), bf16_native ? "yes" : "no", f16_native ? "yes" : "no", reps, min_seconds * 1e3);
  std::vector<Impl> impls{{"f32 sgemm", DType::F32, HalfGemmPath::Auto, F32GemmKernel::OpenBlas}};
  if (onednn_f32_available()) impls.push_back({"f32 oneDNN", DType::F32, HalfGemmPath::Auto, F32GemmKernel::OneDnn});
  if (bf16_native) impls.push_back({"bf16 oneDNN", DType::BF16, HalfGemmPath::OneDnn});
  impls.push_back({"bf16 fallback", DType::BF16, HalfGemmPath::Fallback});
  if (f16_native) impls.push_back({"f16 oneDNN", DType::F16, HalfGemmPath::OneDnn});
  const std::unique_ptr<BlisSgemm> blis = BlisSgemm::load();
  if (blis) impls.push_back({"f32 BLIS", DType::F32, HalfGemmPath::Auto, F32GemmKernel::Auto, blis.get()});
  fmt::print("BLIS: {}\n\n", blis ? "kernels for " + blis->kernel_set() : "not installed (libblis-openmp-dev)");
  fmt::print("| shape (M x N x K) | variant | threads | implementation | GFLOP/s | vs sgemm |\n");
  fmt::print("|---|---|---|---|---|---|\n");
  for (const int threads : thread_counts) {
    set_num_threads(threads);
    if (blis) blis->set_threads(threads);
    for (const GemmShape& s : kShapes)
      if (std::string(s.name).find(only) != std::string::npos)
        for (int variant = 0; variant < 3; ++variant) bench_shape(s, variant, impls, threads, reps, min_seconds);
  }
  set_half_gemm_path(HalfGemmPath::Auto);
  set_f32_gemm_kernel(F32GemmKernel::Auto);
  return 0;
}
