// Linked when normlab is built without CUDA: any request for a CUDA tensor says so clearly.
#ifndef NORMLAB_WITH_CUDA
#include "core/backend.h"

namespace normlab {

Backend& cuda_backend() {
  fail("cuda", "normlab was built without CUDA (configure with -DNORMLAB_CUDA=ON on a machine with nvcc and cuBLAS)");
}
bool cuda_available() { return false; }

}  // namespace normlab
#endif
