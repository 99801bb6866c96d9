// Shared by the CUDA backend tests: the skip without a GPU, seeded random tensors and the
// GPU-against-CPU comparison.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/random.h"

namespace normlab {

#define SKIP_WITHOUT_CUDA() \
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: cuda_available() is false (or built without CUDA)"

inline const Device kCuda = Device::cuda();

inline Tensor random(const Shape& shape, uint64_t seed, DType dtype = DType::F32, double mean = 0.0) {
  Generator gen(seed);
  return Tensor::randn(shape, gen, mean, 1.0, dtype);
}

// max |gpu - cpu| <= tol * max(1, max |cpu|), and the shapes agree.
inline void expect_close(const Tensor& gpu, const Tensor& cpu, double tol, const std::string& what) {
  ASSERT_EQ(gpu.shape(), cpu.shape()) << what;
  EXPECT_EQ(gpu.device(), kCuda) << what << ": result not on the GPU";
  const std::vector<double> a = gpu.to_vector(), b = cpu.to_vector();
  double diff = 0.0, scale = 1.0;
  for (size_t i = 0; i < b.size(); ++i) {
    diff = std::max(diff, std::isnan(a[i]) != std::isnan(b[i]) ? INFINITY : std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  EXPECT_LE(diff / scale, tol) << what;
}

inline double tol_for(DType dtype) { return dtype == DType::F64 ? 1e-12 : 2e-6; }

}  // namespace normlab
