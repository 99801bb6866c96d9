// Tensor factories, views (reshape / transpose share storage), contiguous copies, host round-trips.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "core/backend.h"
#include "core/half.h"
#include "core/ops.h"
#include "core/random.h"
#include "core/tensor.h"

namespace normlab {
namespace {

std::vector<double> iota(int64_t n, double start = 0.0) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = start + static_cast<double>(i);
  return v;
}

TEST(Tensor, FactoriesHaveShapeDtypeAndValues) {
  Tensor z = Tensor::zeros({2, 3}, DType::F64);
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(z.dtype(), DType::F64);
  EXPECT_EQ(z.numel(), 6);
  EXPECT_TRUE(z.is_contiguous());
  for (double v : z.to_vector()) EXPECT_EQ(v, 0.0);

  Tensor f = Tensor::full({4}, 2.5);
  EXPECT_EQ(f.dtype(), DType::F32);
  for (double v : f.to_vector()) EXPECT_EQ(v, 2.5);
  for (double v : Tensor::ones({3, 1}, DType::F64).to_vector()) EXPECT_EQ(v, 1.0);

  Tensor s = Tensor::scalar(-4.0, DType::F64);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.item(), -4.0);
  EXPECT_EQ(z.describe(), "float64 (2, 3) cpu");
  EXPECT_FALSE(Tensor().defined());
}

TEST(Tensor, NegativeDimensionIsRejected) {
  EXPECT_THROW(Tensor::empty({2, -1}), Error);
}

TEST(Tensor, FromVectorRoundTripsEveryDtype) {
  const std::vector<double> v = {1.5, -2.0, 3.25, 0.0, 7.0, -0.5};
  EXPECT_EQ(Tensor::from_vector(v, {2, 3}, DType::F64).to_vector(), v);
  EXPECT_EQ(Tensor::from_vector(v, {3, 2}, DType::F32).to_vector(), v);  // exactly representable
  const std::vector<int32_t> ids = {3, -1, 0, 9};
  EXPECT_EQ(Tensor::from_ints(ids, {2, 2}).to_ints(), ids);
  EXPECT_THROW(Tensor::from_vector(v, {4, 2}), Error);
  EXPECT_THROW(Tensor::from_ints(ids, {3}), Error);
}

// External memory (the Python bindings' NumPy views): no copy, the owner is released with the last
// tensor using it, and the storage is never taken as private (so backward never adopts it as a grad).
TEST(Tensor, FromExternalViewsMemoryAndReleasesItsOwnerLast) {
  std::vector<double> memory = {1, 2, 3, 4, 5, 6};
  bool released = false;
  std::shared_ptr<void> owner(&memory, [&](void*) { released = true; });
  Tensor t = Tensor::from_external(memory.data(), {2, 3}, DType::F64, std::move(owner));
  EXPECT_EQ(t.data<double>(), memory.data());
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_FALSE(t.owns_storage_alone());
  memory[4] = 50;
  EXPECT_EQ(t.to_vector()[4], 50);
  t.data<double>()[0] = -1;
  EXPECT_EQ(memory[0], -1);
  Tensor view = t.transpose(0, 1);
  t = Tensor();
  EXPECT_FALSE(released);
  EXPECT_EQ(view.to_vector(), (std::vector<double>{-1, 4, 2, 50, 3, 6}));
  view = Tensor();
  EXPECT_TRUE(released);
  EXPECT_THROW(Tensor::from_external(memory.data(), {2}, DType::F64, nullptr), Error);
}

TEST(Tensor, TypedAccessChecksDtype) {
  Tensor t = Tensor::zeros({2}, DType::F32);
  EXPECT_NO_THROW(t.data<float>());
  EXPECT_THROW(t.data<double>(), Error);
}

TEST(Tensor, ReshapeOfContiguousIsAViewSharingStorage) {
  Tensor x = Tensor::from_vector(iota(24), {2, 3, 4}, DType::F64);
  Tensor y = x.reshape({4, -1});
  EXPECT_EQ(y.shape(), (Shape{4, 6}));
  EXPECT_EQ(y.storage(), x.storage());
  EXPECT_EQ(y.to_vector(), x.to_vector());
  y.data<double>()[5] = 100.0;  // writes through the view
  EXPECT_EQ(x.to_vector()[5], 100.0);
  EXPECT_THROW(x.reshape({5, 5}), Error);
  EXPECT_THROW(x.reshape({-1, -1}), Error);
  EXPECT_THROW(x.reshape({-1, 7}), Error);
}

TEST(Tensor, TransposeIsAStridedViewAndContiguousCopies) {
  Tensor x = Tensor::from_vector(iota(6), {2, 3}, DType::F64);
  Tensor t = x.transpose(0, 1);
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.storage(), x.storage());
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.strides(), (Shape{1, 3}));
  // Logical order of the transpose: t[i][j] = x[j][i].
  EXPECT_EQ(t.to_vector(), (std::vector<double>{0, 3, 1, 4, 2, 5}));

  Tensor c = t.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_NE(c.storage(), x.storage());
  EXPECT_EQ(c.to_vector(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(x.contiguous().storage(), x.storage());  // no copy when already contiguous

  // Reshaping a non-contiguous view must copy first (the element order is the logical one).
  Tensor r = t.reshape({6});
  EXPECT_NE(r.storage(), x.storage());
  EXPECT_EQ(r.to_vector(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(Tensor, TransposeOfThreeDimsMatchesIndexMapping) {
  Tensor x = Tensor::from_vector(iota(24), {2, 3, 4}, DType::F32);
  Tensor t = x.transpose(0, 2).contiguous();  // (4, 3, 2)
  const std::vector<double> tv = t.to_vector();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) EXPECT_EQ(tv[(k * 3 + j) * 2 + i], (i * 3 + j) * 4 + k);
}

TEST(Tensor, ExpandBroadcastsWithZeroStrides) {
  const Tensor v = Tensor::from_vector({1, 2, 3}, {3}, DType::F64);
  const Tensor e = v.expand({2, 3});
  EXPECT_EQ(e.shape(), (Shape{2, 3}));
  EXPECT_EQ(e.strides(), (Shape{0, 1}));
  EXPECT_EQ(e.contiguous().to_vector(), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  const Tensor col = Tensor::from_vector({1, 2}, {2, 1}, DType::F64).expand({2, 3});
  EXPECT_EQ(col.contiguous().to_vector(), (std::vector<double>{1, 1, 1, 2, 2, 2}));
  EXPECT_THROW(v.expand({2, 4}), Error);
  EXPECT_THROW(v.expand({}), Error);
}

TEST(Tensor, CloneIsIndependentAndConversionsWork) {
  Tensor x = Tensor::from_vector({1, 2, 3}, {3}, DType::F64);
  Tensor c = x.clone();
  c.data<double>()[0] = 9;
  EXPECT_EQ(x.to_vector()[0], 1.0);
  Tensor f = x.to(DType::F32);
  EXPECT_EQ(f.dtype(), DType::F32);
  EXPECT_EQ(f.to_vector(), x.to_vector());
  Tensor dst = Tensor::zeros({3}, DType::F64);
  dst.copy_(f);
  EXPECT_EQ(dst.to_vector(), x.to_vector());
  dst.fill_(4.0);
  EXPECT_EQ(dst.to_vector(), (std::vector<double>{4, 4, 4}));
  EXPECT_THROW(dst.copy_(Tensor::zeros({4})), Error);
}

TEST(Tensor, RandomFactoriesAreSeeded) {
  Generator a(11), b(11);
  Tensor x = Tensor::randn({5, 7}, a, 0.0, 1.0, DType::F64);
  Tensor y = Tensor::randn({5, 7}, b, 0.0, 1.0, DType::F64);
  EXPECT_EQ(x.to_vector(), y.to_vector());
  Tensor u = Tensor::uniform({100}, a, -2.0, 3.0, DType::F64);
  for (double v : u.to_vector()) {
    EXPECT_GE(v, -2.0);
    EXPECT_LT(v, 3.0);
  }
}

TEST(Tensor, NarrowLastAndPadLastAreAdjoint) {
  Tensor x = Tensor::from_vector(iota(12), {3, 4}, DType::F64);
  Tensor n = ops::narrow_last(x, 1, 2);
  EXPECT_EQ(n.shape(), (Shape{3, 2}));
  EXPECT_EQ(n.to_vector(), (std::vector<double>{1, 2, 5, 6, 9, 10}));
  Tensor p = ops::pad_last(n, 1, 4);
  EXPECT_EQ(p.to_vector(), (std::vector<double>{0, 1, 2, 0, 0, 5, 6, 0, 0, 9, 10, 0}));
  // Works on a non-contiguous input (it is made contiguous first).
  Tensor t = ops::narrow_last(x.transpose(0, 1), 0, 1);  // first column of x^T = x's first row
  EXPECT_EQ(t.to_vector(), (std::vector<double>{0, 1, 2, 3}));
  EXPECT_THROW(ops::narrow_last(x, 3, 2), Error);
  EXPECT_THROW(ops::pad_last(n, 3, 4), Error);
}

// scale_ writes x * alpha into x itself: bitwise what ops::scale returns, for every floating dtype
// and for a tensor large enough to run in chunks over the threads; a view it cannot write in
// place is an error naming the op.
TEST(Ops, ScaleInPlaceIsScale) {
  Generator gen(11);
  for (const DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16})
    for (const int64_t n : {int64_t{7}, int64_t{100003}}) {
      Tensor x = Tensor::randn({n}, gen, 0.0, 1.0, DType::F32).to(dtype);
      const Tensor expected = ops::scale(x, -0.37);
      Tensor alias = x;  // a handle on the same storage
      ops::scale_(x, -0.37);
      EXPECT_EQ(x.to_vector(), expected.to_vector()) << dtype_name(dtype) << " n " << n;
      EXPECT_EQ(alias.to_vector(), expected.to_vector()) << "scale_ must write the storage itself";
    }
  Tensor view = Tensor::zeros({3, 4}).transpose(0, 1);
  try {
    ops::scale_(view, 2.0);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[scale_]"), std::string::npos) << e.what();
  }
}

// reduce over each axis of (2, 70, 300) (300 columns: several column blocks and a partial one, the
// bias-gradient walk; 42000 elements: above the parallel threshold) against a plain double loop,
// and bitwise the same at 1 and 2 threads.
TEST(Ops, ReduceMatchesAPlainLoopOnEveryAxisAndThreadCount) {
  Generator gen(31);
  const Tensor x = Tensor::randn({2, 70, 300}, gen);
  const std::vector<double> v = x.to_vector();
  const int64_t dims[3] = {2, 70, 300};
  const int threads_before = num_threads();
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max})
    for (int axis : {0, 1, 2}) {
      set_num_threads(1);
      const std::vector<double> one = ops::reduce(op, x, axis, false).to_vector();
      set_num_threads(2);
      EXPECT_EQ(ops::reduce(op, x, axis, false).to_vector(), one) << "thread count changed axis " << axis;
      size_t k = 0;
      for (int64_t a = 0; a < dims[axis == 0 ? 1 : 0]; ++a)
        for (int64_t b = 0; b < dims[axis == 2 ? 1 : 2]; ++b, ++k) {
          double acc = op == ReduceOp::Max ? -INFINITY : 0.0;
          for (int64_t j = 0; j < dims[axis]; ++j) {
            int64_t idx[3];
            idx[axis] = j;
            idx[axis == 0 ? 1 : 0] = a;
            idx[axis == 2 ? 1 : 2] = b;
            const double e = v[static_cast<size_t>((idx[0] * 70 + idx[1]) * 300 + idx[2])];
            acc = op == ReduceOp::Max ? std::max(acc, e) : acc + e;
          }
          if (op == ReduceOp::Mean) acc /= static_cast<double>(dims[axis]);
          ASSERT_NEAR(one[k], acc, 1e-5) << "axis " << axis << " output " << k;
        }
    }
  set_num_threads(threads_before);
}

// Strided copies and fills above the parallel threshold split rows over threads: each strided
// layout (rows gathered by a transpose, a last axis with stride != 1, rows broadcast by expand,
// a float32 -> bfloat16 conversion) must land every element where plain indexing says, at 1 and 2
// threads; a tensor with a zero-length outer axis copies to nothing.
TEST(Tensor, StridedCopiesAndFillsMatchIndexingAtEveryThreadCount) {
  Generator gen(41);
  const Tensor x = Tensor::randn({4, 50, 3, 70}, gen);  // 42000 elements
  const std::vector<double> v = x.to_vector();
  const auto at = [&](int64_t a, int64_t b, int64_t c, int64_t d) { return v[((a * 50 + b) * 3 + c) * 70 + d]; };
  const Tensor row = Tensor::randn({1, 300}, gen);
  const std::vector<double> row_v = row.to_vector();
  const int threads_before = num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    const std::vector<double> rows_moved = x.transpose(1, 2).contiguous().to_vector();    // (4,3,50,70)
    const std::vector<double> last_strided = x.transpose(2, 3).contiguous().to_vector();  // (4,50,70,3)
    const std::vector<double> as_bf16 = x.transpose(1, 2).to(DType::BF16).to_vector();
    size_t i = 0;
    for (int64_t a = 0; a < 4; ++a)
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t b = 0; b < 50; ++b)
          for (int64_t d = 0; d < 70; ++d, ++i) {
            ASSERT_EQ(rows_moved[i], at(a, b, c, d)) << threads << " threads, element " << i;
            ASSERT_EQ(as_bf16[i], static_cast<double>(bf16_to_float(float_to_bf16(static_cast<float>(at(a, b, c, d))))));
          }
    i = 0;
    for (int64_t a = 0; a < 4; ++a)
      for (int64_t b = 0; b < 50; ++b)
        for (int64_t d = 0; d < 70; ++d)
          for (int64_t c = 0; c < 3; ++c, ++i) ASSERT_EQ(last_strided[i], at(a, b, c, d)) << threads << " threads";
    const std::vector<double> broadcast = row.expand({200, 300}).clone().to_vector();
    for (size_t k = 0; k < broadcast.size(); ++k) ASSERT_EQ(broadcast[k], row_v[k % 300]) << threads << " threads";
    for (double e : Tensor::full({300, 301}, -1.5).to_vector()) ASSERT_EQ(e, -1.5);
    EXPECT_EQ(Tensor::zeros({0, 5}).transpose(0, 1).contiguous().shape(), (Shape{5, 0}));
  }
  set_num_threads(threads_before);
}

}  // namespace
}  // namespace normlab
