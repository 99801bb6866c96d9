// Data-parallel training on a Communicator (dist/communicator.h): every rank holds the
// whole model, draws every global batch from the same data stream, trains on its contiguous
// shard of rows, and sums the shards' gradients so that each rank takes the same step.
//
// The loss is a mean over the counted (target >= 0) tokens of the global batch. Rank r's loss
// L_r is the mean over its n_r counted tokens, so with n = sum_r n_r
//   L = sum_r (n_r / n) L_r     and     dL/dw = sum_r (n_r / n) dL_r/dw,
// which is what global_mean() and allreduce_gradients() compute. The result equals one process's
// up to float32 rounding: each token's contribution is the same (for 2 ranks of equal shards the
// weight 1/2 is exact), but the sum over rows runs in another order (per shard, then across ranks).
#pragma once
#include <cstdint>
#include <utility>

#include "core/random.h"
#include "data/dataset.h"
#include "dist/communicator.h"
#include "nn/transformer.h"
#include "optim/optimizer.h"

namespace normlab {

// Rows [rank * B/size, (rank + 1) * B/size) of a global batch (B, T). The caller has checked that
// size divides B (check_batch_divides).
Batch shard_of(const Batch& global, const Communicator& comm);
// Throws "[train] train.batch_size = 12 is not divisible by the 5 processes ..." unless size divides it.
void check_batch_divides(int64_t batch_size, const Communicator& comm);
// The number of counted tokens (target >= 0) of a batch.
int64_t counted_tokens(const Batch& batch);

// The global batch's mean from each rank's mean over its own `count` tokens (see above).
double global_mean(double local_mean, int64_t count, Communicator& comm);
// Replaces every parameter's gradient with sum_r (n_r / n) grad_r, reduced in buckets of
// kGradientBucketFloats floats (several parameters per bucket, a long one split across buckets).
inline constexpr size_t kGradientBucketFloats = size_t{1} << 20;  // 4 MiB of float32
void allreduce_gradients(const TransformerLM& model, int64_t local_count, Communicator& comm,
                         size_t bucket_floats = kGradientBucketFloats);
// The RMS over the global batch from each rank's RMS over its equal shard.
double global_rms(double local_rms, Communicator& comm);

// Copies rank 0's parameters, buffers, optimizer state and data generator to every rank and
// returns rank 0's `step`: a fresh run starts every rank from rank 0's initialization, and a
// resumed run from the checkpoint that only rank 0 read.
int64_t copy_from_root(TransformerLM& model, Optimizer& optimizer, Generator& data_gen, int64_t step,
                       Communicator& comm);
// Throws "[train] rank R's weights differ from rank 0's after step S" unless every rank holds
// the same bits (a hash of the parameters); called where rank 0 saves a checkpoint.
void check_replicas_agree(const TransformerLM& model, int64_t step, Communicator& comm);

}  // namespace normlab
