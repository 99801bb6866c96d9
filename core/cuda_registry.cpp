// Where the CUDA backend registers itself. core/cuda/ (the normlab_cuda library) fills the hooks
// from a static initializer when a program links it; a program without it gets a clear error.
#include "core/backend.h"

namespace normlab {

namespace {

// Constant-initialized (all null) before any dynamic initializer runs, so a registration from
// normlab_cuda's static initializer is never overwritten.
constinit CudaBackendHooks registered_hooks{};

}  // namespace

void register_cuda_backend(const CudaBackendHooks& hooks) {
  NL_CHECK(hooks.backend && hooks.available && hooks.trim_cache, "cuda", "register_cuda_backend: a hook is null");
  registered_hooks = hooks;
}

bool cuda_backend_linked() { return registered_hooks.backend != nullptr; }

Backend& cuda_backend() {
  if (!cuda_backend_linked())
    fail("cuda", "this program has no CUDA backend: normlab was built without CUDA (configure with "
                 "-DNORMLAB_CUDA=ON on a machine with nvcc and cuBLAS), or the program does not link normlab::cuda");
  return registered_hooks.backend();
}

bool cuda_available() { return cuda_backend_linked() && registered_hooks.available(); }

size_t cuda_trim_cache() { return cuda_backend_linked() ? registered_hooks.trim_cache() : 0; }

}  // namespace normlab
