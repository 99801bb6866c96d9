// What subnormal operands cost a float32 GEMM on this CPU, and what train.flush_denormals saves.
// Times ops::matmul of (768, 512) x (512, 128) (char_small's MLP down product) with A normal, with A
// subnormal, and with A subnormal under set_flush_denormals(true), on one thread.
//   build/subnormal_gemm [--reps R]
#include <fmt/core.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/denormals.h"
#include "core/ops.h"
#include "core/tensor.h"

namespace {

using normlab::Tensor;

// Median milliseconds of one product over reps timings of 5 products each (after one untimed).
double median_ms(const Tensor& a, const Tensor& b, int reps) {
  (void)normlab::ops::matmul(a, b);
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 5; ++i) (void)normlab::ops::matmul(a, b);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 5);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 2 && std::string(argv[1]) == "--reps" ? std::atoi(argv[2]) : 5;
  normlab::set_num_threads(1);
  const Tensor b = Tensor::full({512, 128}, 0.5);
  const Tensor normal = Tensor::full({768, 512}, 0.25), subnormal = Tensor::full({768, 512}, FLT_MIN / 4);
  normlab::set_flush_denormals(false);
  const double normal_ms = median_ms(normal, b, reps), subnormal_ms = median_ms(subnormal, b, reps);
  normlab::set_flush_denormals(true);
  const double flushed_ms = median_ms(subnormal, b, reps);
  fmt::print("(768, 512) x (512, 128), 1 thread, median of {} x 5 products, ms per product:\n", reps);
  fmt::print("  A normal               {:8.2f}\n", normal_ms);
  fmt::print("  A subnormal            {:8.2f}  ({:.0f}x)\n", subnormal_ms, subnormal_ms / normal_ms);
  fmt::print("  A subnormal, flushed   {:8.2f}  ({:.1f}x)\n", flushed_ms, flushed_ms / normal_ms);
  return 0;
}
