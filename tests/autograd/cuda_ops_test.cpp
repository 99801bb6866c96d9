// CPU vs CUDA for every registered op case (autograd/gradcheck.h's registry, the same one that
// drives the finite-difference checks): the same inputs, the same seed gradient, forward output and
// every input gradient compared with a per-op tolerance, in float32 and float64. Norm and softmax
// cases also run at larger shapes, so that blocks hold several warps and weight gradients several
// row chunks. Skipped (with the reason) when no GPU is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "autograd/tape.h"
#include "core/backend.h"
#include "core/random.h"

namespace normlab {
namespace {

#define SKIP_WITHOUT_CUDA() \
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: cuda_available() is false (or built without CUDA)"

struct Outputs {
  std::vector<double> y;
  std::vector<std::vector<double>> grads;  // one per differentiable input
};

Outputs run_case(const OpCase& c, const std::vector<Tensor>& inputs, DType dtype, Device device) {
  Tape::current().clear();
  std::vector<Var> vars;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor t = inputs[i];
    if (t.defined() && t.dtype() != DType::I32) t = t.to(dtype);
    if (t.defined()) t = t.clone().to(device);
    const bool wants = std::find(c.differentiable.begin(), c.differentiable.end(), static_cast<int>(i)) !=
                       c.differentiable.end();
    vars.push_back(Var(t, wants));
  }
  Var y = c.fn(vars);
  Outputs out;
  out.y = y.value().to_vector();
  if (y.requires_grad()) {
    Generator gen(99);
    const Tensor seed = Tensor::randn(y.shape(), gen, 0.0, 1.0, dtype).to(device);
    backward(y, seed);
  }
  for (int idx : c.differentiable) {
    const Tensor& g = vars[idx].grad();
    out.grads.push_back(g.defined() ? g.to_vector() : std::vector<double>(inputs[idx].numel(), 0.0));
  }
  return out;
}

// max |a - b| / max(1, max |b|): errors relative to the tensor's scale.
double scaled_error(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0.0, scale = 1.0;
  for (size_t i = 0; i < b.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return std::isfinite(diff) ? diff / scale : INFINITY;
}

// float32 tolerances: the CPU and GPU round differently (summation order, exp/tanh, FMA), and
// the normalizations' backward cancels (dxhat - mean(dxhat) - ...), so they get more room.
double tolerance(const std::string& name, DType dtype) {
  if (dtype == DType::F64) return 1e-10;
  static const std::map<std::string, double> loose = {
      {"layer_norm", 2e-4},      {"layer_norm_no_affine", 2e-4}, {"rms_norm", 2e-4},
      {"rms_norm_unit_offset", 2e-4}, {"group_norm", 2e-4},      {"batch_norm", 2e-4},
      {"batch_norm_eval", 2e-4}, {"residual_norm_block", 2e-4}, {"attention", 1e-4},
      {"cross_entropy", 1e-4},   {"gelu", 5e-5},                {"tanh", 5e-5},
      {"silu", 5e-5},            {"exp", 5e-5}};
  const auto it = loose.find(name);
  return it != loose.end() ? it->second : 3e-5;
}

void compare_case(const OpCase& c, const Shape& hint, DType dtype) {
  const std::vector<Tensor> inputs = c.make_inputs(0, hint);
  const Outputs cpu = run_case(c, inputs, dtype, Device::cpu());
  const Outputs gpu = run_case(c, inputs, dtype, Device::cuda());
  const double tol = tolerance(c.name, dtype);
  const std::string where = c.name + " " + std::string(dtype_name(dtype)) + " " + shape_str(inputs[0].shape());
  ASSERT_EQ(cpu.y.size(), gpu.y.size()) << where;
  EXPECT_LE(scaled_error(gpu.y, cpu.y), tol) << where << ": forward";
  ASSERT_EQ(cpu.grads.size(), gpu.grads.size()) << where;
  for (size_t k = 0; k < cpu.grads.size(); ++k) {
    const int idx = c.differentiable[k];
    EXPECT_LE(scaled_error(gpu.grads[k], cpu.grads[k]), tol) << where << ": gradient of " << c.input_names[idx];
  }
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const OpCase& c : op_cases()) names.push_back(c.name);
  return names;
}

class CudaVsCpu : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaVsCpu, Float32ForwardAndBackwardMatch) {
  SKIP_WITHOUT_CUDA();
  const OpCase* c = find_op_case(GetParam());
  ASSERT_NE(c, nullptr);
  compare_case(*c, {}, DType::F32);
}

TEST_P(CudaVsCpu, Float64ForwardAndBackwardMatch) {
  SKIP_WITHOUT_CUDA();
  const OpCase* c = find_op_case(GetParam());
  ASSERT_NE(c, nullptr);
  compare_case(*c, {}, DType::F64);
}

// The finite-difference check itself on the GPU, float64: the op's CUDA forward gives the numeric
// gradient, its CUDA backward the analytic one (inputs copied there, output back: on_device).
TEST_P(CudaVsCpu, Float64GradcheckOnTheGpu) {
  SKIP_WITHOUT_CUDA();
  const OpCase* c = find_op_case(GetParam());
  ASSERT_NE(c, nullptr);
  for (const InputCheck& r : gradcheck(on_device(c->fn, Device::cuda()), c->make_inputs(0, {}), c->input_names,
                                       c->differentiable, c->options))
    EXPECT_TRUE(r.passed) << c->name << " input " << r.input << ": max rel error " << r.max_rel_error;
}

INSTANTIATE_TEST_SUITE_P(AllOps, CudaVsCpu, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// Larger shapes through the cases that take a shape hint: rows of 520 and 5000 (several warps, more
// than 4 elements per thread), 2100 rows (more rows than the norms' 1024 row blocks, several
// column chunks for BatchNorm).
TEST(CudaVsCpuLarge, NormsSoftmaxAndDropoutAtLargerShapes) {
  SKIP_WITHOUT_CUDA();
  for (const char* name : {"layer_norm", "layer_norm_no_affine", "rms_norm", "rms_norm_unit_offset", "group_norm",
                           "batch_norm", "softmax", "dropout"}) {
    const OpCase* c = find_op_case(name);
    ASSERT_NE(c, nullptr) << name;
    for (const Shape& hint : {Shape{3, 50, 520}, Shape{6, 5000}, Shape{2100, 48}}) compare_case(*c, hint, DType::F32);
  }
}

TEST(CudaVsCpuLarge, RepeatedRunsAreBitIdentical) {
  SKIP_WITHOUT_CUDA();
  // The weight gradients are reduced without atomics: two runs must agree exactly.
  const OpCase* c = find_op_case("layer_norm");
  ASSERT_NE(c, nullptr);
  const std::vector<Tensor> inputs = c->make_inputs(3, Shape{64, 40, 96});
  const Outputs first = run_case(*c, inputs, DType::F32, Device::cuda());
  const Outputs second = run_case(*c, inputs, DType::F32, Device::cuda());
  EXPECT_EQ(first.y, second.y);
  EXPECT_EQ(first.grads, second.grads);
}

}  // namespace
}  // namespace normlab
