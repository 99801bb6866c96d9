// Sizes at the int64 boundary: every product of sizes is checked (core/shape.h), so a shape whose
// element or byte count does not fit is an error naming the op and the shape, never a wrapped
// size (which allocated a tiny buffer and let kernels write far past it), and a failed allocation
// is an OutOfMemory naming the tensor that leaves the allocator's accounting as it was.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "core/cpu/cpu_allocator.h"
#include "core/ops.h"
#include "core/shape.h"
#include "core/tensor.h"
#include "test_util.h"  // error_of

#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer aborts on an allocation beyond its maximum (1 TiB) instead of failing it; tests
// here ask for more on purpose and expect the allocation to fail.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

namespace normlab {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kTwoTo61 = int64_t{1} << 61;

using test::error_of;

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

TEST(SizeOverflow, CheckedMulIsExactUpToTheInt64BoundaryAndThrowsPastIt) {
  EXPECT_EQ(checked_mul(kMax, 1, "op", "x"), kMax);
  EXPECT_EQ(checked_mul(1, kMax, "op", "x"), kMax);
  EXPECT_EQ(checked_mul(0, kMax, "op", "x"), 0);
  EXPECT_EQ(checked_mul(int64_t{1} << 62, 1, "op", "x"), int64_t{1} << 62);
  EXPECT_EQ(checked_mul(3037000499, 3037000499, "op", "x"), 9223372030926249001);  // floor(sqrt(2^63 - 1))^2
  EXPECT_THROW(checked_mul(3037000500, 3037000500, "op", "x"), Error);
  EXPECT_THROW(checked_mul(int64_t{1} << 62, 2, "op", "x"), Error);  // exactly 2^63
  EXPECT_THROW(checked_mul(kMax, 2, "op", "x"), Error);
  EXPECT_THROW(checked_mul(-1, 2, "op", "x"), Error);
  const std::string msg =
      error_of([] { checked_mul(kTwoTo61, 128, "model", "context_length * d_model"); });
  expect_contains(msg, "[model] context_length * d_model = 2305843009213693952 * 128 overflows int64");
}

TEST(SizeOverflow, NumelAndStridesOfShapesThatDoNotFitAreErrorsNamingOpAndShape) {
  EXPECT_EQ(numel_of({int64_t{1} << 31, int64_t{1} << 31}), int64_t{1} << 62);
  EXPECT_EQ(numel_of({0, 5}), 0);
  EXPECT_EQ(numel_of({kMax}), kMax);
  const std::string msg = error_of([] { numel_of({int64_t{1} << 32, int64_t{1} << 31}, "embedding"); });
  expect_contains(msg, "[embedding]");
  expect_contains(msg, "(4294967296, 2147483648)");
  EXPECT_THROW(numel_of({3, -2}), Error);
  EXPECT_THROW(contiguous_strides({kTwoTo61, 8, 2}), Error);
  EXPECT_EQ(contiguous_strides({int64_t{1} << 60, 2, 2}), (Shape{4, 2, 1}));
}

TEST(SizeOverflow, TensorWhoseElementsOrBytesOverflowIsAnErrorBeforeAnyAllocation) {
  // 2^61 x 128 elements wraps to 0 in int64: the old code allocated 1 byte for it.
  expect_contains(error_of([] { Tensor::empty({kTwoTo61, 128}); }), "(2305843009213693952, 128)");
  // 2^62 float32 elements fit int64, their 2^64 bytes do not.
  const std::string bytes = error_of([] { Tensor::empty({kTwoTo61, 2}, DType::F32); });
  expect_contains(bytes, "float32 (2305843009213693952, 2) needs more than 2^63 - 1 bytes");
  EXPECT_THROW(Tensor::zeros({kMax, 2}), Error);
}

TEST(SizeOverflow, TensorTooLargeForAnyHostIsOutOfMemoryNamingIt) {
  // 2^62 bytes: more than a 57-bit address space holds, so the system refuses it on every host.
  try {
    Tensor::empty({int64_t{1} << 57, 8}, DType::F32);
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    expect_contains(e.what(), "[tensor] out of memory allocating float32 (144115188075855872, 8) on cpu");
    expect_contains(e.what(), "(4.0 EiB)");
  }
}

TEST(SizeOverflow, ViewsAndProductsWhoseResultDoesNotFitAreErrorsNamingTheOp) {
  const Tensor one = Tensor::ones({1, 1});
  expect_contains(error_of([&] { one.expand({kTwoTo61, 8}); }), "[expand]");
  const Tensor four = Tensor::ones({4});
  expect_contains(error_of([&] { four.reshape({-1, int64_t{1} << 62, 4}); }), "[reshape]");
  // Broadcast views, so that nothing big is allocated: (2^40, 1) @ (1, 2^40) has 2^80 elements.
  const Tensor a = one.expand({int64_t{1} << 40, 1}), b = one.expand({1, int64_t{1} << 40});
  const std::string msg = error_of([&] { ops::matmul(a, b); });
  expect_contains(msg, "[matmul]");
  expect_contains(msg, "(1099511627776, 1099511627776)");
  // M = 2^31 does not fit BLAS's int: an error, not a truncated GEMM.
  const Tensor tall = one.expand({int64_t{1} << 31, 1});
  const std::string blas = error_of([&] { ops::matmul(tall, one); });
  expect_contains(blas, "[matmul] a (2147483648, 1) by b (1, 1)");
  expect_contains(blas, "2^31 - 1");
}

TEST(SizeOverflow, FailedHostAllocationLeavesTheAllocatorsAccountingUnchanged) {
  HostBlockCache cache(size_t{1} << 20);
  void* p = cache.allocate(1000);
  const size_t in_use = cache.in_use_bytes(), peak = cache.peak_in_use_bytes();
  EXPECT_THROW(cache.allocate(size_t{1} << 62), OutOfMemory);
  EXPECT_THROW(cache.allocate(std::numeric_limits<size_t>::max()), OutOfMemory);  // no wrap in rounding
  EXPECT_EQ(cache.in_use_bytes(), in_use);
  EXPECT_EQ(cache.peak_in_use_bytes(), peak);
  cache.release(p, 1000);
  EXPECT_EQ(cache.in_use_bytes(), 0u);
}

}  // namespace
}  // namespace normlab
