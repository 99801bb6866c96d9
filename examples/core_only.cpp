// A program that links normlab::core and nothing else: it must link (core needs no CUDA symbol),
// compute on the CPU, and say clearly that it has no CUDA backend when asked for one.
#include <cstdio>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/ops.h"

using namespace normlab;

int main() {
  const Tensor a = Tensor::from_vector({1, 2, 3, 6}, {4}, DType::F64);
  const std::vector<double> doubled = ops::binary(BinaryOp::Add, a, a, "add").to_vector();  // on the CPU backend
  bool ok = doubled == std::vector<double>{2, 4, 6, 12};
  ok = ok && !cuda_backend_linked() && !cuda_available() && cuda_trim_cache() == 0;
  try {
    cuda_backend();
    ok = false;
    std::printf("cuda_backend() did not throw without normlab::cuda\n");
  } catch (const Error& e) {
    std::printf("without normlab::cuda: %s\n", e.what());
    ok = ok && std::string(e.what()).rfind("[cuda] ", 0) == 0;
  }
  std::printf("%s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
