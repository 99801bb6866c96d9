// The CUDA backend registers itself with core when a program links normlab_cuda
// (core/cuda_registry.cpp). The test programs link it in a CUDA build: if the registration were
// dropped by the linker, every CUDA test would skip itself as if there were no GPU, so say it here.
#include <gtest/gtest.h>

#include <string>

#include "core/backend.h"

namespace normlab {
namespace {

TEST(BackendRegistry, TheCudaBackendIsRegisteredExactlyInACudaBuild) {
  EXPECT_EQ(cuda_backend_linked(), NORMLAB_TEST_CUDA_BUILT != 0);
}

TEST(BackendRegistry, WithoutTheCudaLibraryAskingForCudaSaysSo) {
  if (cuda_backend_linked()) GTEST_SKIP() << "built with CUDA: the backend is linked";
  EXPECT_FALSE(cuda_available());
  EXPECT_EQ(cuda_trim_cache(), 0u);
  try {
    cuda_backend();
    FAIL() << "cuda_backend() without a registered backend did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[cuda] this program has no CUDA backend", 0), 0u) << e.what();
  }
}

// A norm kernel a backend has not implemented (the base's default, reached here by a qualified
// call on the CPU backend) throws naming the kernel and the device.
TEST(BackendRegistry, ANormKernelABackendLacksSaysWhichAndWhere) {
  Backend& cpu = backend_for(Device::cpu());
  Tensor x = Tensor::zeros({2, 4}), w = Tensor::ones({4}), y = Tensor::zeros({2, 4}), rstd = Tensor::zeros({2});
  try {
    cpu.Backend::rms_norm_forward(x, w, 1e-6, false, y, rstd);
    FAIL() << "the default did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "[rms_norm_forward] not implemented on cpu");
  }
  cpu.rms_norm_forward(x, w, 1e-6, false, y, rstd);  // the CPU's own kernel
}

TEST(BackendRegistry, AnIncompleteRegistrationIsRefused) {
  EXPECT_THROW(register_cuda_backend(CudaBackendHooks{}), Error);
}

}  // namespace
}  // namespace normlab
