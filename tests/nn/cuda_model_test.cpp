// Whole-model check on the GPU: a tiny TransformerLM built on the host and moved with Module::to
// must give the CPU's loss, every parameter's gradient and the AdamW-updated weights within
// float32 noise (dropout on: its masks are the same on both devices). Plus Module::to itself.
// GPU tests are skipped, with the reason, when no device is present.
#include <gtest/gtest.h>

#include <cmath>

#include "autograd/autocast.h"
#include "autograd/tape.h"
#include "core/backend.h"
#include "nn/transformer.h"
#include "nn_test_util.h"

namespace normlab {
namespace {

#define SKIP_WITHOUT_CUDA() \
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: cuda_available() is false (or built without CUDA)"

const Device kCuda = Device::cuda();

// max |a - b| / max(1, max |b|)
double scaled_error(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to_vector(), y = b.to_vector();
  double diff = 0.0, scale = 1.0;
  for (size_t i = 0; i < y.size(); ++i) {
    diff = std::max(diff, std::abs(x[i] - y[i]));
    scale = std::max(scale, std::abs(y[i]));
  }
  return std::isfinite(diff) ? diff / scale : INFINITY;
}

void one_step_matches(const std::string& placement, const std::string& norm, const std::string& ffn) {
  ModelConfig c = testing::small_config(placement, norm, ffn, /*tied=*/placement != "post");
  c.dropout = 0.1;
  TransformerLM cpu(c), gpu(c);
  gpu.to(kCuda);
  cpu.set_record_residual_rms(true);
  gpu.set_record_residual_rms(true);
  const std::string what = placement + "/" + norm + "/" + ffn;
  const Tensor ids = testing::random_ids(3, 6, c.vocab_size, 1), targets = testing::random_ids(3, 6, c.vocab_size, 2);
  cpu.set_dropout_seed(5);
  gpu.set_dropout_seed(5);
  // backward() takes the whole tape: each device's forward and backward in turn, not interleaved
  const Var loss_cpu = cpu.loss(ids, targets);
  backward(loss_cpu);
  const Var loss_gpu = gpu.loss(ids.to(kCuda), targets.to(kCuda));
  backward(loss_gpu);
  EXPECT_NEAR(loss_gpu.item(), loss_cpu.item(), 2e-5) << what;
  ASSERT_EQ(gpu.residual_rms().size(), cpu.residual_rms().size());
  for (size_t l = 0; l < cpu.residual_rms().size(); ++l)
    EXPECT_NEAR(gpu.residual_rms()[l], cpu.residual_rms()[l], 1e-5 * cpu.residual_rms()[l]) << what;
  const auto pc = cpu.named_parameters(), pg = gpu.named_parameters();
  ASSERT_EQ(pc.size(), pg.size());
  for (size_t i = 0; i < pc.size(); ++i) {
    ASSERT_EQ(pc[i].first, pg[i].first);
    ASSERT_TRUE(pg[i].second.grad().defined()) << what << " " << pg[i].first << " got no gradient";
    EXPECT_EQ(pg[i].second.grad().device(), kCuda) << pg[i].first;
    EXPECT_LE(scaled_error(pg[i].second.grad(), pc[i].second.grad()), 2e-4) << what << " grad " << pc[i].first;
  }
  // One AdamW update through each device's backend (the optimizers' kernel). Adam's first step
  // moves a weight by about lr g / (|g| + eps): with a tiny eps a near-zero gradient whose sign
  // differs between devices would move it by +-lr; eps = 1e-3 keeps such updates linear in g.
  const AdamArgs adam{1e-2, 0.9, 0.99, 1e-3, 0.1, 1, true};
  for (size_t i = 0; i < pc.size(); ++i) {
    for (const auto* side : {&pc[i].second, &pg[i].second}) {
      Var p = *side;
      Tensor m = Tensor::zeros(p.shape(), p.dtype(), p.value().device());
      Tensor v = Tensor::zeros(p.shape(), p.dtype(), p.value().device());
      backend_for(p.value().device()).adam_step(adam, p.value(), p.grad(), m, v);
    }
    EXPECT_LE(scaled_error(pg[i].second.value(), pc[i].second.value()), 1e-4) << what << " updated " << pc[i].first;
  }
}

TEST(CudaModel, OneTrainingStepMatchesCpu) {
  SKIP_WITHOUT_CUDA();
  one_step_matches("pre", "layernorm", "gelu");
  one_step_matches("post", "rmsnorm", "relu");
  one_step_matches("sandwich", "rmsnorm_unit_offset", "swiglu");
  one_step_matches("pre", "groupnorm", "geglu");
  one_step_matches("pre", "batchnorm", "gelu");
}

// train.precision = bf16/fp16 on the GPU: the forward under autocast (16-bit GEMMs and row norms,
// the other ops staged through float32) gives the CPU's loss and gradients within the rounding of
// 16-bit activations (the two devices' float32 kernels differ in their last bits, which can flip a
// 16-bit rounding).
TEST(CudaModel, AutocastLossAndGradientsMatchCpu) {
  SKIP_WITHOUT_CUDA();
  for (DType dtype : {DType::BF16, DType::F16}) {
    const ModelConfig c = testing::small_config("pre", "layernorm", "gelu", /*tied=*/true);
    TransformerLM cpu(c), gpu(c);
    gpu.to(kCuda);
    const Tensor ids = testing::random_ids(3, 6, c.vocab_size, 1), targets = testing::random_ids(3, 6, c.vocab_size, 2);
    double loss_cpu = 0, loss_gpu = 0;
    {
      AutocastGuard autocast(dtype);
      const Var l = cpu.loss(ids, targets);
      backward(l);
      loss_cpu = l.item();
    }
    {
      AutocastGuard autocast(dtype);
      const Var l = gpu.loss(ids.to(kCuda), targets.to(kCuda));
      backward(l);
      loss_gpu = l.item();
    }
    const double tol = dtype == DType::BF16 ? 2e-2 : 4e-3;
    EXPECT_NEAR(loss_gpu, loss_cpu, tol * std::abs(loss_cpu)) << dtype_name(dtype);
    const auto pc = cpu.named_parameters(), pg = gpu.named_parameters();
    for (size_t i = 0; i < pc.size(); ++i) {
      ASSERT_TRUE(pg[i].second.grad().defined()) << pg[i].first << " got no gradient";
      EXPECT_EQ(pg[i].second.grad().dtype(), DType::F32) << pg[i].first << ": master gradients are float32";
      EXPECT_LE(scaled_error(pg[i].second.grad(), pc[i].second.grad()), 10 * tol) << dtype_name(dtype) << " grad "
                                                                                   << pc[i].first;
    }
  }
}

TEST(CudaModel, BatchNormBuffersMoveAndUpdateOnTheDevice) {
  SKIP_WITHOUT_CUDA();
  const ModelConfig c = testing::small_config("pre", "batchnorm");
  TransformerLM cpu(c), gpu(c);
  gpu.to(kCuda);
  const Tensor ids = testing::random_ids(2, 6, c.vocab_size, 3);
  cpu.forward(ids);
  gpu.forward(ids.to(kCuda));
  const auto bc = cpu.named_buffers(), bg = gpu.named_buffers();
  ASSERT_EQ(bc.size(), bg.size());
  ASSERT_FALSE(bc.empty());
  for (size_t i = 0; i < bc.size(); ++i) {
    EXPECT_EQ(bg[i].second.device(), kCuda) << bg[i].first;
    EXPECT_LE(scaled_error(bg[i].second, bc[i].second), 1e-5) << bg[i].first;
  }
}

TEST(ModuleTo, MovingToTheSameDeviceKeepsValuesAndHandles) {
  const ModelConfig c = testing::small_config("pre", "batchnorm");
  TransformerLM model(c);
  const auto before = model.named_parameters();
  const std::vector<double> first = before.front().second.value().to_vector();
  model.to(Device::cpu());
  const auto after = model.named_parameters();
  ASSERT_EQ(after.size(), before.size());
  EXPECT_EQ(after.front().second.get(), before.front().second.get());  // the same Var, in place
  EXPECT_EQ(after.front().second.value().to_vector(), first);
  for (const auto& [name, buffer] : model.named_buffers()) EXPECT_EQ(buffer.device(), Device::cpu()) << name;
}

TEST(ModuleTo, MovingToCudaWithoutADeviceSaysSo) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: this checks the error without one";
  TransformerLM model(testing::small_config("pre"));
  try {
    model.to(kCuda);
    FAIL() << "moving to cuda without a device did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[cuda] ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace normlab
