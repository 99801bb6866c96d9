// The 16-bit elementwise kernels: unary, unary_backward, binary and axpy on bfloat16/float16
// tensors. Where every tensor is contiguous and of one shape, each chunk of kChunkElements is loaded
// into float32 buffers on the stack, the float32 kernel runs on them (core/cpu/elementwise_kernels.h)
// and the result is rounded back: the staging layer's result bit for bit (HalfStaging,
// cpu_half_staging.h), without whole-tensor temporaries or extra passes over memory, and split over
// the threads. Anything else (broadcasts, strided views) goes through HalfStaging.
#include <array>

#include "core/cpu/cpu_backend.h"
#include "core/cpu/cpu_half_staging.h"
#include "core/cpu/elementwise_kernels.h"
#include "core/cpu/half_convert.h"

namespace normlab {

namespace {

constexpr size_t kMaxInputs = 3;

// Whether the chunked path takes this call: every defined tensor contiguous, of dtype H and of
// out's element count (same-shape calls only: the callers check shapes).
template <typename H> bool chunkable(std::initializer_list<const Tensor*> inputs, const Tensor& out) {
  if (out.dtype() != dtype_of<H>() || !out.is_contiguous()) return false;
  for (const Tensor* t : inputs)
    if (t->defined() && (t->dtype() != dtype_of<H>() || !t->is_contiguous() || t->numel() != out.numel()))
      return false;
  return true;
}

// kernel(in, out, len): in[j] is input j's chunk in float32 (nullptr for an undefined input), out the
// output's (holding out's old values when accumulate is set).
template <typename H, typename Kernel>
void run_in_chunks(std::initializer_list<const Tensor*> inputs, Tensor& out, bool accumulate, Kernel kernel) {
  std::array<const H*, kMaxInputs> src{};
  size_t count = 0;
  for (const Tensor* t : inputs) src[count++] = t->defined() ? t->data<H>() : nullptr;
  H* dst = out.data<H>();
  for_each_chunk(out.numel(), kParallelElements, [&](int64_t i, int64_t len) {
    alignas(64) float buffers[kMaxInputs + 1][kChunkElements];
    std::array<const float*, kMaxInputs> in{};
    for (size_t j = 0; j < count; ++j) {
      if (src[j] == nullptr) continue;
      to_float(src[j] + i, buffers[j], len);
      in[j] = buffers[j];
    }
    float* result = buffers[kMaxInputs];
    if (accumulate) to_float(dst + i, result, len);
    kernel(in, result, len);
    from_float(result, dst + i, len);
  });
}

// Runs the chunked path for the call's half dtype; false when it does not apply.
template <typename Kernel>
bool try_chunked(std::initializer_list<const Tensor*> inputs, Tensor& out, bool accumulate, Kernel kernel) {
  if (chunkable<bfloat16>(inputs, out)) {
    run_in_chunks<bfloat16>(inputs, out, accumulate, kernel);
    return true;
  }
  if (chunkable<float16>(inputs, out)) {
    run_in_chunks<float16>(inputs, out, accumulate, kernel);
    return true;
  }
  return false;
}

}  // namespace

void HalfStagingBackend::unary(UnaryOp op, const Tensor& x, Tensor& y, double alpha) {
  const auto kernel = [&](const auto& in, float* out, int64_t len) {
    elementwise::unary_kernel<float>(op, in[0], out, len, static_cast<float>(alpha));
  };
  if (try_chunked({&x}, y, false, kernel)) return;
  HalfStaging s(k_, "unary", {&x}, {&y});
  k_.unary(op, s.in(0), s.out(0), alpha);
  s.store_outputs();
}

void HalfStagingBackend::unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy,
                                        Tensor& dx, double alpha) {
  const auto kernel = [&](const auto& in, float* out, int64_t len) {
    elementwise::unary_backward_kernel<float>(op, in[0], in[1], in[2], out, len, static_cast<float>(alpha));
  };
  const Tensor unread;  // x or y when the op's backward does not read it: not converted
  const Tensor& x_in = elementwise::backward_reads_x(op) ? x : unread;
  const Tensor& y_in = elementwise::backward_reads_y(op) ? y : unread;
  if (try_chunked({&x_in, &y_in, &dy}, dx, false, kernel)) return;
  HalfStaging s(k_, "unary_backward", {&x, &y, &dy}, {&dx});
  k_.unary_backward(op, s.in(0), s.in(1), s.in(2), s.out(0), alpha);
  s.store_outputs();
}

void HalfStagingBackend::binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) {
  const auto kernel = [&](const auto& in, float* result, int64_t len) {
    elementwise::binary_kernel<float>(op, in[0], in[1], result, len);
  };
  if (a.shape() == out.shape() && b.shape() == out.shape() && try_chunked({&a, &b}, out, false, kernel)) return;
  HalfStaging s(k_, "binary", {&a, &b}, {&out});
  k_.binary(op, s.in(0), s.in(1), s.out(0));
  s.store_outputs();
}

void HalfStagingBackend::axpy(double alpha, const Tensor& x, Tensor& y) {
  const auto kernel = [&](const auto& in, float* result, int64_t len) {
    elementwise::axpy_kernel<float>(static_cast<float>(alpha), in[0], result, len);
  };
  if (x.shape() == y.shape() && try_chunked({&x}, y, true, kernel)) return;
  HalfStaging s(k_, "axpy", {&x}, {&y});
  k_.axpy(alpha, s.in(0), s.out(0));
  s.store_outputs();
}

}  // namespace normlab
