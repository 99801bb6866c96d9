// Linked only when normlab is built without CUDA (core/CMakeLists.txt leaves it out otherwise):
// any request for a CUDA tensor says so clearly.
#include "core/backend.h"

namespace normlab {

Backend& cuda_backend() {
  fail("cuda", "normlab was built without CUDA (configure with -DNORMLAB_CUDA=ON on a machine with nvcc and cuBLAS)");
}
bool cuda_available() { return false; }
size_t cuda_trim_cache() { return 0; }

}  // namespace normlab
