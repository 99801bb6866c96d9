// bfloat16 and float16 on the CUDA backend against the CPU backend: conversions and fills bit for bit
// (both round to nearest even, once), and the ops without a 16-bit kernel (staged through float32,
// core/half_staging.h) within one 16-bit rounding of the CPU's result. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/backend.h"
#include "core/ops.h"
#include "cuda_test_util.h"

namespace normlab {
namespace {

// Relative size of one rounding at magnitude 1..2: 2^-7 (bfloat16), 2^-10 (float16).
double half_ulp(DType dtype) { return dtype == DType::BF16 ? std::ldexp(1.0, -7) : std::ldexp(1.0, -10); }

void expect_bitwise(const Tensor& gpu, const Tensor& cpu, const std::string& what) {
  ASSERT_EQ(gpu.shape(), cpu.shape()) << what;
  ASSERT_EQ(gpu.dtype(), cpu.dtype()) << what;
  const std::vector<double> a = gpu.to_vector(), b = cpu.to_vector();
  int64_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ += !(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])));
  EXPECT_EQ(differ, 0) << what;
}

TEST(CudaHalf, ConversionsAndFillsAreBitwiseTheCpus) {
  SKIP_WITHOUT_CUDA();
  const Tensor x = random({37, 61}, 1);  // float32, values that need rounding
  for (DType dtype : {DType::BF16, DType::F16}) {
    const std::string name(dtype_name(dtype));
    const Tensor cpu_half = x.to(dtype), gpu_half = x.to(kCuda).to(dtype);
    expect_bitwise(gpu_half, cpu_half, name + " from float32");
    expect_bitwise(gpu_half.to(DType::F32), cpu_half.to(DType::F32), name + " to float32");
    expect_bitwise(gpu_half.to(DType::F64), cpu_half.to(DType::F64), name + " to float64");
    expect_bitwise(gpu_half.transpose(0, 1).contiguous(), cpu_half.transpose(0, 1).contiguous(), name + " strided");
    Tensor cpu_fill = Tensor::empty({5, 3}, dtype), gpu_fill = Tensor::empty({5, 3}, dtype, kCuda);
    backend_for(Device::cpu()).fill(cpu_fill, 0.1);
    backend_for(kCuda).fill(gpu_fill, 0.1);
    expect_bitwise(gpu_fill, cpu_fill, name + " fill 0.1");
  }
}

TEST(CudaHalf, StagedOpsMatchTheCpuWithinOneRounding) {
  SKIP_WITHOUT_CUDA();
  for (DType dtype : {DType::BF16, DType::F16}) {
    const std::string name(dtype_name(dtype));
    const double tol = 2 * half_ulp(dtype);
    const Tensor a = random({6, 40}, 2).to(dtype), b = random({40}, 3).to(dtype);
    const Tensor ag = a.to(kCuda), bg = b.to(kCuda);
    expect_close(ops::unary(UnaryOp::Gelu, ag), ops::unary(UnaryOp::Gelu, a), tol, name + " gelu");
    expect_close(ops::binary(BinaryOp::Mul, ag, bg, "binary"), ops::binary(BinaryOp::Mul, a, b, "binary"), tol,
                 name + " broadcast mul");
    expect_close(ops::reduce(ReduceOp::Sum, ag, 1), ops::reduce(ReduceOp::Sum, a, 1), tol, name + " row sums");
    expect_close(ops::sum_to(ag, {40}), ops::sum_to(a, {40}), tol, name + " column sums");
    expect_close(ops::softmax(ag, {}), ops::softmax(a, {}), tol, name + " softmax");
    const double cpu_squares = backend_for(Device::cpu()).sum_squares(a);
    EXPECT_NEAR(backend_for(kCuda).sum_squares(ag), cpu_squares, 1e-6 * cpu_squares) << name;
    EXPECT_TRUE(backend_for(kCuda).all_finite(ag)) << name;
    Tensor with_inf = a.to(DType::F32);
    with_inf.data<float>()[17] = std::numeric_limits<float>::infinity();
    EXPECT_FALSE(backend_for(kCuda).all_finite(with_inf.to(dtype).to(kCuda))) << name << ": inf not seen";
  }
}

}  // namespace
}  // namespace normlab
