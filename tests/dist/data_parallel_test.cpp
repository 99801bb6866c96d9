// The pieces of data-parallel training that need no second process: the gradient buckets, the
// weighting by counted tokens and the batch shards, against a stand-in for rank 1.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "core/random.h"
#include "dist/data_parallel.h"
#include "test_util.h"

namespace normlab {
namespace {

// One rank of two (rank 0 unless told), where the other one contributes, to the element at flat position k of everything
// all-reduced so far, the value k (floats) or `other_count` (doubles: the token count). It records
// the size of every float all-reduce (the buckets).
class StandInForRankOne final : public Communicator {
 public:
  explicit StandInForRankOne(double other_count, int rank = 0) : other_count_(other_count), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return 2; }
  void allreduce_sum(float* data, size_t count) override {
    for (size_t i = 0; i < count; ++i) data[i] += static_cast<float>(position_ + i);
    position_ += count;
    buckets.push_back(count);
  }
  void allreduce_sum(double* data, size_t count) override {
    for (size_t i = 0; i < count; ++i) data[i] += other_count_;
  }
  void broadcast(void*, size_t, int) override {}
  void barrier() override {}
  [[noreturn]] void abort(int exit_code) override { std::exit(exit_code); }
  std::vector<size_t> buckets;

 private:
  double other_count_;
  int rank_;
  size_t position_ = 0;
};

ModelConfig tiny_model() {
  ModelConfig c;
  c.vocab_size = 8;
  c.d_model = 8;
  c.n_heads = 2;
  c.n_layers = 1;
  c.d_ff = 16;
  c.context_length = 4;
  return c;
}

// Every parameter's gradient: uniform values, and the flattened copy (in parameter order).
std::vector<float> set_random_grads(const TransformerLM& model) {
  Generator gen(5);
  std::vector<float> flat;
  for (auto& [name, p] : model.named_parameters()) {
    Var v = p;
    v.grad() = Tensor::uniform(v.value().shape(), gen, -1.0, 1.0);
    const float* g = v.grad().data<float>();
    flat.insert(flat.end(), g, g + v.grad().numel());
  }
  return flat;
}

TEST(DataParallel, GradientBucketsPutEveryElementBackWhereItCameFrom) {
  for (const size_t bucket : {size_t{7}, size_t{1000}, kGradientBucketFloats}) {
    SCOPED_TRACE(bucket);
    TransformerLM model(tiny_model());
    const std::vector<float> mine = set_random_grads(model);
    StandInForRankOne comm(/*other_count=*/3.0);
    allreduce_gradients(model, /*local_count=*/1, comm, bucket);
    // This rank counted 1 token of 4: its gradient weighs 1/4, rank 1's arrives as k.
    size_t k = 0;
    for (const auto& [name, p] : model.named_parameters()) {
      const std::vector<double> got = p.grad().to_vector();
      for (size_t i = 0; i < got.size(); ++i, ++k)
        ASSERT_EQ(got[i], static_cast<float>(mine[k] * 0.25f + static_cast<float>(k))) << name << "[" << i << "]";
    }
    ASSERT_EQ(k, mine.size());
    // Full buckets, then the rest.
    for (size_t b = 0; b + 1 < comm.buckets.size(); ++b) EXPECT_EQ(comm.buckets[b], bucket);
    EXPECT_EQ(comm.buckets.size(), (mine.size() + bucket - 1) / bucket);
  }
}

TEST(DataParallel, ShardsAreContiguousRowsOfTheGlobalBatch) {
  StandInForRankOne comm(0.0), rank_one(0.0, 1);
  std::vector<int32_t> ids(4 * 3), targets(4 * 3);
  for (int i = 0; i < 12; ++i) ids[i] = i, targets[i] = i % 5 == 0 ? -1 : 100 + i;
  const Batch global{Tensor::from_ints(ids, {4, 3}), Tensor::from_ints(targets, {4, 3})};
  const Batch shard = shard_of(global, comm);  // rank 0 of 2: rows 0 and 1
  EXPECT_EQ(shard.inputs.shape(), (Shape{2, 3}));
  EXPECT_EQ(shard.inputs.to_ints(), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(counted_tokens(shard), 4);  // positions 0 and 5 are ignored
  const Batch other = shard_of(global, rank_one);  // rows 2 and 3
  EXPECT_EQ(other.inputs.to_ints(), (std::vector<int32_t>{6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(other.targets.to_ints(), (std::vector<int32_t>{106, 107, 108, 109, -1, 111}));
  EXPECT_EQ(counted_tokens(global), 9);
}

TEST(DataParallel, TheGlobalMeanWeighsEachRankByItsTokens) {
  StandInForRankOne comm(/*other_count=*/3.0);  // the double all-reduce adds 3 to every entry
  // Rank 0: mean 2 over 1 token; "rank 1" adds 3 to the sum and 3 to the count: (2 + 3) / (1 + 3).
  EXPECT_DOUBLE_EQ(global_mean(2.0, 1, comm), 5.0 / 4.0);
  EXPECT_NE(test::error_of([&] { check_batch_divides(5, comm); })
                .find("train.batch_size = 5 is not divisible by the 2 processes"),
            std::string::npos);
}

}  // namespace
}  // namespace normlab
