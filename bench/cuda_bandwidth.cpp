// GPU memory bandwidth of the fused norm kernels (and softmax) against a device-to-device copy,
// float32 or bfloat16, (rows, C) = (16384, 1024) by default: 64 MiB per float32 tensor, several
// times the H200's L2.
//   build/cuda_bandwidth [rows C [iterations [f32|bf16]]]
// In bf16 every tensor (x, dy, the parameters, y, dx) is bfloat16 and the statistics float32; the
// copy reference is a bfloat16 copy of the same x, so "% of copy" compares like with like.
// GB/s counts the bytes an ideal kernel must move: forward reads x and writes y (2 N); backward
// reads dy and x and writes dx (3 N; the weight gradients' (C,) outputs are negligible). A copy
// moves 2 N. Our backward runs the dx kernel and the weight-gradient column sums as two passes, so
// it really moves about 5 N: the figure is the useful bandwidth, not the hardware's.
// Timing: std::chrono around `iterations` launches, cudaDeviceSynchronize before and after.
#include <cuda_runtime.h>
#include <fmt/core.h>

#include <chrono>
#include <functional>
#include <string>

#include "core/backend.h"
#include "core/norm_ops.h"
#include "core/ops.h"
#include "core/random.h"

using namespace normlab;

namespace {

double seconds_per_call(const std::function<void()>& f, int iterations) {
  f();  // warm-up (allocator, first launch)
  cudaDeviceSynchronize();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) f();
  cudaDeviceSynchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iterations;
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_available()) {
    fmt::print(stderr, "cuda_bandwidth: no CUDA device\n");
    return 1;
  }
  const int64_t rows = argc > 2 ? std::stoll(argv[1]) : 16384, C = argc > 2 ? std::stoll(argv[2]) : 1024;
  const int iterations = argc > 3 ? std::stoi(argv[3]) : 20;
  const std::string dtype_arg = argc > 4 ? argv[4] : "f32";
  if (dtype_arg != "f32" && dtype_arg != "bf16") {
    fmt::print(stderr, "cuda_bandwidth: dtype must be f32 or bf16, got '{}'\n", dtype_arg);
    return 2;
  }
  const DType dtype = dtype_arg == "bf16" ? DType::BF16 : DType::F32;
  const Device gpu = Device::cuda();
  Generator gen(1);
  auto random = [&](const Shape& shape) { return Tensor::randn(shape, gen).to(dtype).to(gpu); };
  const Tensor x = random({rows, C}), dy = random({rows, C});
  const Tensor gamma = random({C}), beta = random({C});
  const double n_bytes = static_cast<double>(x.nbytes());

  const double copy_s = seconds_per_call([&] { (void)x.clone(); }, iterations);
  const double copy_gbs = 2.0 * n_bytes / copy_s / 1e9;
  fmt::print("cuda_bandwidth: {} ({}, {}), {:.0f} MiB per tensor, {} iterations\n", dtype_name(dtype),
             rows, C, n_bytes / (1 << 20), iterations);
  fmt::print("  {:<28} {:8.1f} GB/s   (reference)\n", "device copy", copy_gbs);
  // A kernel this dtype does not have on CUDA is reported as such (the norms must have it).
  auto report = [&](const std::string& name, double tensors_moved, const std::function<void()>& f) {
    double s = 0;
    try {
      s = seconds_per_call(f, iterations);
    } catch (const std::exception& e) {
      fmt::print("  {:<28} not measured: {}\n", name, e.what());
      return;
    }
    const double gbs = tensors_moved * n_bytes / s / 1e9;
    fmt::print("  {:<28} {:8.1f} GB/s   {:5.1f}% of copy   {:8.3f} ms\n", name, gbs, 100.0 * gbs / copy_gbs, s * 1e3);
  };
  const ops::NormForward ln = ops::layer_norm(x, gamma, beta, 1e-5);
  report("layer_norm forward", 2, [&] { (void)ops::layer_norm(x, gamma, beta, 1e-5); });
  report("layer_norm backward", 3, [&] { (void)ops::layer_norm_backward(dy, x, gamma, ln, true, true); });
  report("layer_norm fwd+bwd", 5, [&] {
    const ops::NormForward f = ops::layer_norm(x, gamma, beta, 1e-5);
    (void)ops::layer_norm_backward(dy, x, gamma, f, true, true);
  });
  const ops::NormForward rms = ops::rms_norm(x, gamma, 1e-6, false);
  report("rms_norm forward", 2, [&] { (void)ops::rms_norm(x, gamma, 1e-6, false); });
  report("rms_norm backward", 3, [&] { (void)ops::rms_norm_backward(dy, x, gamma, rms, false, true); });
  report("rms_norm fwd+bwd", 5, [&] {
    const ops::NormForward f = ops::rms_norm(x, gamma, 1e-6, false);
    (void)ops::rms_norm_backward(dy, x, gamma, f, false, true);
  });
  if (dtype == DType::F32) {  // the attention softmax and GELU: float32 only here
    const Tensor y = ops::softmax(x, {});
    report("softmax forward", 2, [&] { (void)ops::softmax(x, {}); });
    report("softmax backward", 3, [&] { (void)ops::softmax_backward(y, dy, 1.0); });
    report("gelu forward", 2, [&] { (void)ops::unary(UnaryOp::Gelu, x); });
  }
  return 0;
}
