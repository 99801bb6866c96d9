// Training does not depend on the thread count: a char_small-sized model's loss and every
// gradient are bitwise equal at 1 and 2 threads. At these sizes the CPU backend splits GEMMs by
// rows, by columns and by batch entries (attention), and splits copies, norms, softmax and
// reductions into per-thread ranges; each must sum in the same order at every thread count.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "autograd/tape.h"
#include "core/backend.h"
#include "core/cpu/blas_core.h"
#include "nn/transformer.h"
#include "nn_test_util.h"

namespace normlab {
namespace {

struct LossAndGradients {
  double loss = 0;
  std::vector<std::string> names;
  std::vector<std::vector<double>> gradients;
};

LossAndGradients one_step(const ModelConfig& c, int threads) {
  const int before = num_threads();
  set_num_threads(threads);
  TransformerLM model(c);
  const Tensor ids = testing::random_ids(3, c.context_length, c.vocab_size, 3);
  const Tensor targets = testing::random_ids(3, c.context_length, c.vocab_size, 4);
  LossAndGradients out;
  const Var loss = model.loss(ids, targets);
  backward(loss);
  out.loss = loss.item();
  for (const auto& [name, p] : model.named_parameters()) {
    out.names.push_back(name);
    out.gradients.push_back(p.grad().to_vector());
  }
  set_num_threads(before);
  return out;
}

// Needs OpenBLAS's AVX-512 kernels (core/cpu/blas_core.h): ctest reruns it under SkylakeX's.
TEST(ThreadCount, LossAndGradientsAreBitwiseEqualAtOneAndTwoThreadsUnderAvx512Kernels) {
  if (!blas_runs_avx512_kernels())
    GTEST_SKIP() << "OpenBLAS runs " << blas_core_name() << " kernels; ctest reruns this under SkylakeX's";
  ModelConfig c = testing::small_config("pre");
  c.vocab_size = 65;
  c.d_model = 128;
  c.n_heads = 4;
  c.d_ff = 512;
  c.context_length = 64;
  const LossAndGradients one = one_step(c, 1), two = one_step(c, 2);
  EXPECT_EQ(one.loss, two.loss);
  ASSERT_EQ(one.gradients.size(), two.gradients.size());
  for (size_t i = 0; i < one.gradients.size(); ++i) EXPECT_EQ(one.gradients[i], two.gradients[i]) << one.names[i];
}

}  // namespace
}  // namespace normlab
