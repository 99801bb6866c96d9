// Embedding gather and its backward, a scatter-add (ids that repeat receive the sum of their rows).
#include <cstring>

#include "core/cpu/cpu_backend.h"

namespace normlab {

void CpuBackend::embedding_forward(const Tensor& weight, const Tensor& ids, Tensor& out) {
  const int64_t vocab = weight.shape()[0], dim = weight.shape()[1], rows = ids.numel();
  const int32_t* idp = ids.data<int32_t>();
  for (int64_t r = 0; r < rows; ++r)
    NL_CHECK(idp[r] >= 0 && idp[r] < vocab, "embedding", "id {} at position {} is outside [0, {})",
             idp[r], r, vocab);
  const size_t row_bytes = static_cast<size_t>(dim) * dtype_size(weight.dtype());
  const char* w = static_cast<const char*>(weight.raw_data());
  char* o = static_cast<char*>(out.raw_data());
  for (int64_t r = 0; r < rows; ++r) std::memcpy(o + r * row_bytes, w + idp[r] * row_bytes, row_bytes);
}

void CpuBackend::embedding_backward(const Tensor& ids, const Tensor& dy, Tensor& dweight) {
  const int64_t dim = dweight.shape()[1], rows = ids.numel();
  const int32_t* idp = ids.data<int32_t>();
  dispatch_floating(dy.dtype(), "embedding_backward", [&](auto t) {
    using T = decltype(t);
    const T* g = dy.data<T>();
    T* dw = dweight.data<T>();
    for (int64_t r = 0; r < rows; ++r) {
      T* dst = dw + static_cast<int64_t>(idp[r]) * dim;
      const T* src = g + r * dim;
      for (int64_t j = 0; j < dim; ++j) dst[j] += src[j];
    }
  });
}

}  // namespace normlab
