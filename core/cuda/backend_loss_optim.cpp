// CudaBackend: softmax, embedding, cross-entropy and the optimizer updates. The checks that the
// CPU backend makes on the host (ids and targets in range) run on the device here; the first bad
// position comes back with the one small copy these ops make anyway, and the error names it as
// the CPU's does.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/cuda/cuda_backend.h"
#include "core/cuda/kernels.h"

namespace normlab {

namespace {

constexpr unsigned long long kNone = ~0ull;

void check_on_cuda(const Tensor& t, const char* op, const char* name) {
  NL_CHECK(t.device().kind == DeviceKind::CUDA, op, "{} is on {} but the op runs on cuda", name, t.device().str());
}

}  // namespace

void CudaBackend::softmax(const SoftmaxArgs& args, const Tensor& x, Tensor& y) {
  if (staged_half("softmax", {&x}, {&y}, [&](HalfStaging& h) { softmax(args, h.in(0), h.out(0)); })) return;
  const int64_t cols = x.dim() == 0 ? 1 : x.shape().back();
  const int64_t rows = x.numel() / std::max<int64_t>(cols, 1);
  NL_CHECK(!args.causal || (x.dim() >= 2 && x.shape()[x.dim() - 2] == cols), "causal_softmax",
           "expected (..., T, T), got {}", shape_str(x.shape()));
  cuda_dispatch(x.dtype(), "softmax", [&](auto t) {
    using T = decltype(t);
    check_kernel(cuda::softmax(dev<T>(x), dev<T>(y), rows, cols, args.causal, args.window, T(args.scale), stream_),
                 "softmax");
  });
}

void CudaBackend::softmax_backward(double scale, const Tensor& y, const Tensor& dy, Tensor& dx) {
  if (staged_half("softmax_backward", {&y, &dy}, {&dx},
                  [&](HalfStaging& h) { softmax_backward(scale, h.in(0), h.in(1), h.out(0)); }))
    return;
  const int64_t cols = y.dim() == 0 ? 1 : y.shape().back();
  const int64_t rows = y.numel() / std::max<int64_t>(cols, 1);
  cuda_dispatch(y.dtype(), "softmax_backward", [&](auto t) {
    using T = decltype(t);
    check_kernel(cuda::softmax_backward(dev<T>(y), dev<T>(dy), dev<T>(dx), rows, cols, T(scale), stream_),
                 "softmax_backward");
  });
}

void CudaBackend::embedding_forward(const Tensor& weight, const Tensor& ids, Tensor& out) {
  if (staged_half("embedding", {&weight}, {&out}, [&](HalfStaging& h) { embedding_forward(h.in(0), ids, h.out(0)); }))
    return;
  check_on_cuda(ids, "embedding", "ids");
  const int64_t vocab = weight.shape()[0], dim = weight.shape()[1], rows = ids.numel();
  DeviceScratch bad(*this, sizeof(unsigned long long));
  NL_CUDA(cudaMemsetAsync(bad.get(), 0xFF, sizeof(unsigned long long), stream_));
  cuda_dispatch(weight.dtype(), "embedding", [&](auto t) {
    using T = decltype(t);
    check_kernel(cuda::embedding_forward(dev<T>(weight), dev<int32_t>(ids), dev<T>(out), rows, vocab, dim,
                                         bad.as<unsigned long long>(), stream_),
                 "embedding_forward");
  });
  unsigned long long position = kNone;
  copy_to_host(&position, bad.get(), sizeof(position));
  if (position != kNone) {
    int32_t id = 0;
    copy_to_host(&id, dev<int32_t>(ids) + position, sizeof(id));
    fail("embedding", "id {} at position {} is outside [0, {})", id, position, vocab);
  }
}

void CudaBackend::embedding_backward(const Tensor& ids, const Tensor& dy, Tensor& dweight) {
  if (staged_half("embedding_backward", {&dy}, {&dweight},
                  [&](HalfStaging& h) { embedding_backward(ids, h.in(0), h.out(0)); }))
    return;
  check_on_cuda(ids, "embedding_backward", "ids");
  const int64_t vocab = dweight.shape()[0], dim = dweight.shape()[1], rows = ids.numel();
  DeviceScratch counts(*this, static_cast<size_t>(vocab) * sizeof(int));
  cuda_dispatch(dy.dtype(), "embedding_backward", [&](auto t) {
    using T = decltype(t);
    check_kernel(cuda::embedding_backward(dev<int32_t>(ids), dev<T>(dy), dev<T>(dweight), rows, vocab, dim,
                                          counts.as<int>(), stream_),
                 "embedding_backward");
  });
}

double CudaBackend::cross_entropy_forward(const Tensor& logits, const Tensor& targets, int32_t ignore_index,
                                          Tensor& lse) {
  double staged_loss = 0.0;
  if (staged_half("cross_entropy", {&logits}, {&lse}, [&](HalfStaging& h) {
        staged_loss = cross_entropy_forward(h.in(0), targets, ignore_index, h.out(0));
      }))
    return staged_loss;
  check_on_cuda(targets, "cross_entropy", "targets");
  const int64_t rows = logits.shape()[0], vocab = logits.shape()[1];
  DeviceScratch scratch(*this, cuda::cross_entropy_scratch_bytes(rows));
  // result[0] = total loss, result[1] = counted rows, then the first bad row (as 8 bytes).
  DeviceScratch result(*this, 3 * sizeof(double));
  NL_CUDA(cudaMemsetAsync(result.as<double>() + 2, 0xFF, sizeof(unsigned long long), stream_));
  cuda_dispatch(logits.dtype(), "cross_entropy", [&](auto t) {
    using T = decltype(t);
    check_kernel(cuda::cross_entropy_forward(
                     dev<T>(logits), dev<int32_t>(targets), ignore_index, rows, vocab, dev<T>(lse), result.as<double>(),
                     reinterpret_cast<unsigned long long*>(result.as<double>() + 2), scratch.get(), stream_),
                 "cross_entropy_forward");
  });
  double host[3] = {0.0, 0.0, 0.0};
  copy_to_host(host, result.get(), sizeof(host));
  unsigned long long bad_row = kNone;
  static_assert(sizeof(bad_row) == sizeof(double));
  std::memcpy(&bad_row, &host[2], sizeof(bad_row));
  if (bad_row != kNone) {
    int32_t target = 0;
    copy_to_host(&target, dev<int32_t>(targets) + bad_row, sizeof(target));
    fail("cross_entropy", "target {} at row {} is outside [0, {})", target, bad_row, vocab);
  }
  return host[1] > 0.0 ? host[0] / host[1] : 0.0;
}

void CudaBackend::cross_entropy_backward(const Tensor& logits, const Tensor& targets, int32_t ignore_index,
                                         const Tensor& lse, double scale, Tensor& dlogits) {
  if (staged_half("cross_entropy_backward", {&logits, &lse}, {&dlogits}, [&](HalfStaging& h) {
        cross_entropy_backward(h.in(0), targets, ignore_index, h.in(1), scale, h.out(0));
      }))
    return;
  check_on_cuda(targets, "cross_entropy_backward", "targets");
  const int64_t rows = logits.shape()[0], vocab = logits.shape()[1];
  cuda_dispatch(logits.dtype(), "cross_entropy_backward", [&](auto t) {
    using T = decltype(t);
    check_kernel(cuda::cross_entropy_backward(dev<T>(logits), dev<int32_t>(targets), ignore_index, dev<T>(lse),
                                              static_cast<T>(scale), dev<T>(dlogits), rows, vocab, stream_),
                 "cross_entropy_backward");
  });
}

// ---- optimizer updates: bias corrections in double on the host, as the CPU backend ----

void CudaBackend::adam_step(const AdamArgs& a, Tensor& param, const Tensor& grad, Tensor& m, Tensor& v) {
  const double bc1 = 1.0 - std::pow(a.beta1, static_cast<double>(a.step));
  const double bc2 = 1.0 - std::pow(a.beta2, static_cast<double>(a.step));
  const cuda::AdamConstants c{a.beta1,    a.beta2, a.lr, a.weight_decay, a.eps, a.lr / bc1, 1.0 / std::sqrt(bc2),
                              a.decoupled};
  cuda_dispatch(param.dtype(), "adam", [&](auto t) {
    using T = decltype(t);
    check_kernel(cuda::adam_step(c, dev<T>(param), dev<T>(grad), dev<T>(m), dev<T>(v), param.numel(), stream_),
                 "adam_step");
  });
}

void CudaBackend::sgd_step(double lr, double momentum, double weight_decay, Tensor& param, const Tensor& grad,
                           Tensor& momentum_buf) {
  cuda_dispatch(param.dtype(), "sgd", [&](auto t) {
    using T = decltype(t);
    check_kernel(cuda::sgd_step(lr, momentum, weight_decay, dev<T>(param), dev<T>(grad),
                                mutable_data_or_null<T>(momentum_buf), param.numel(), stream_),
                 "sgd_step");
  });
}

void CudaBackend::radam_step(const RAdamArgs& a, Tensor& param, const Tensor& grad, Tensor& m, Tensor& v) {
  const double bc1 = 1.0 - std::pow(a.beta1, static_cast<double>(a.step));
  const double bc2 = 1.0 - std::pow(a.beta2, static_cast<double>(a.step));
  const cuda::RAdamConstants c{a.beta1,
                               a.beta2,
                               a.weight_decay,
                               a.eps,
                               a.lr / bc1,
                               a.lr * a.rectification * std::sqrt(bc2) / bc1,
                               a.rectification > 0.0};
  cuda_dispatch(param.dtype(), "radam", [&](auto t) {
    using T = decltype(t);
    check_kernel(cuda::radam_step(c, dev<T>(param), dev<T>(grad), dev<T>(m), dev<T>(v), param.numel(), stream_),
                 "radam_step");
  });
}

}  // namespace normlab
