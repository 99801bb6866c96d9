#include "dist/data_parallel.h"

#include <cmath>
#include <array>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/ops.h"

namespace normlab {
namespace {

// The contiguous host bytes of a tensor that every rank holds with the same shape and dtype.
void broadcast_tensor(Tensor& t, Communicator& comm) {
  NL_CHECK(t.device().kind == DeviceKind::CPU && t.is_contiguous(), "data_parallel",
           "broadcast needs a contiguous host tensor, got {}", t.describe());
  comm.broadcast(t.raw_data(), t.nbytes(), 0);
}

void broadcast_string(std::string& text, Communicator& comm) {
  uint64_t length = text.size();
  comm.broadcast(&length, sizeof length, 0);
  text.resize(length);
  comm.broadcast(text.data(), length, 0);
}

// Rank 0's optimizer state to every rank: the names, dtypes and shapes first (other ranks may hold
// no state yet: buffers are allocated on first use), then each tensor's bytes.
void broadcast_optimizer_state(Optimizer& optimizer, Communicator& comm) {
  std::vector<std::pair<std::string, Tensor>> state = optimizer.state();
  std::string layout;  // "name dtype d0 d1 ...\n" per tensor
  for (const auto& [name, t] : state) {
    layout += fmt::format("{} {}", name, static_cast<int>(t.dtype()));
    for (const int64_t d : t.shape()) layout += fmt::format(" {}", d);
    layout += '\n';
  }
  broadcast_string(layout, comm);
  if (!comm.is_root()) {
    state.clear();
    std::istringstream lines(layout);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream fields(line);
      std::string name;
      int dtype = 0;
      fields >> name >> dtype;
      Shape shape;
      for (int64_t d; fields >> d;) shape.push_back(d);
      state.emplace_back(name, Tensor::empty(shape, static_cast<DType>(dtype)));
    }
  }
  for (auto& [name, t] : state) {
    t = t.contiguous();
    broadcast_tensor(t, comm);
  }
  int64_t steps = optimizer.step_count();
  comm.broadcast(&steps, sizeof steps, 0);
  if (!comm.is_root()) optimizer.load_state(state, steps);
}

// FNV-1a over the bytes of every parameter.
uint64_t parameter_hash(const TransformerLM& model) {
  uint64_t hash = 1469598103934665603ull;
  for (const auto& [name, p] : model.named_parameters()) {
    const Tensor t = p.value().contiguous();
    const auto* bytes = static_cast<const unsigned char*>(t.raw_data());
    for (size_t i = 0; i < t.nbytes(); ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  }
  return hash;
}

}  // namespace

void check_batch_divides(int64_t batch_size, const Communicator& comm) {
  NL_CHECK(batch_size % comm.size() == 0, "train",
           "train.batch_size = {} is not divisible by the {} processes of the MPI job: the global batch "
           "is split into equal shards (choose a batch size that is a multiple of {}, or another -np)",
           batch_size, comm.size(), comm.size());
}

Batch shard_of(const Batch& global, const Communicator& comm) {
  if (comm.size() == 1) return global;
  const int64_t rows = global.inputs.size(0) / comm.size();
  const auto rows_of = [&](const Tensor& t) {  // (B, T) -> (rows, T), a fresh tensor
    if (!t.defined()) return t;
    const int64_t width = t.size(1);
    return ops::narrow_last(t.reshape({1, -1}), comm.rank() * rows * width, rows * width).reshape({rows, width});
  };
  return {rows_of(global.inputs), rows_of(global.targets), rows_of(global.sources), rows_of(global.source_padding)};
}

int64_t counted_tokens(const Batch& batch) {
  int64_t count = 0;
  for (const int32_t target : batch.targets.to_ints()) count += target >= 0 ? 1 : 0;
  return count;
}

double global_mean(double local_mean, int64_t count, Communicator& comm) {
  if (comm.size() == 1) return local_mean;
  double sums[2] = {count > 0 ? local_mean * static_cast<double>(count) : 0.0, static_cast<double>(count)};
  comm.allreduce_sum(sums, 2);
  return sums[0] / sums[1];
}

double global_rms(double local_rms, Communicator& comm) {
  if (comm.size() == 1) return local_rms;
  double square = local_rms * local_rms;
  comm.allreduce_sum(&square, 1);
  return std::sqrt(square / comm.size());
}

void allreduce_gradients(const TransformerLM& model, int64_t local_count, Communicator& comm,
                         size_t bucket_floats) {
  if (comm.size() == 1) return;
  double total = static_cast<double>(local_count);
  comm.allreduce_sum(&total, 1);
  const float weight = static_cast<float>(static_cast<double>(local_count) / total);  // n_r / n
  std::vector<float> bucket;
  bucket.reserve(bucket_floats);
  std::vector<std::pair<float*, size_t>> pieces;  // where each run of the bucket came from
  const auto reduce_bucket = [&] {
    comm.allreduce_sum(bucket.data(), bucket.size());
    const float* from = bucket.data();
    for (const auto& [to, count] : pieces) {
      std::memcpy(to, from, count * sizeof(float));
      from += count;
    }
    bucket.clear();
    pieces.clear();
  };
  for (auto& [name, p] : model.named_parameters()) {
    Tensor& g = p.grad();
    NL_CHECK(g.defined() && g.dtype() == DType::F32 && g.device().kind == DeviceKind::CPU && g.is_contiguous(),
             "data_parallel", "parameter '{}' has no float32 host gradient to reduce", name);
    float* data = g.data<float>();
    for (size_t done = 0, n = static_cast<size_t>(g.numel()); done < n;) {
      const size_t take = std::min(n - done, bucket_floats - bucket.size());
      for (size_t i = 0; i < take; ++i) bucket.push_back(data[done + i] * weight);
      pieces.emplace_back(data + done, take);
      done += take;
      if (bucket.size() == bucket_floats) reduce_bucket();
    }
  }
  if (!bucket.empty()) reduce_bucket();
}

int64_t copy_from_root(TransformerLM& model, Optimizer& optimizer, Generator& data_gen, int64_t step,
                       Communicator& comm) {
  if (comm.size() == 1) return step;
  for (auto& [name, p] : model.named_parameters()) broadcast_tensor(p.value(), comm);
  for (auto& [name, t] : model.named_buffers()) broadcast_tensor(t, comm);
  broadcast_optimizer_state(optimizer, comm);
  std::array<uint64_t, 6> state = data_gen.state();
  comm.broadcast(state.data(), sizeof state, 0);
  data_gen.set_state(state);
  comm.broadcast(&step, sizeof step, 0);
  return step;
}

void check_replicas_agree(const TransformerLM& model, int64_t step, Communicator& comm) {
  if (comm.size() == 1) return;
  const uint64_t mine = parameter_hash(model);
  uint64_t root = mine;
  comm.broadcast(&root, sizeof root, 0);
  NL_CHECK(root == mine, "train", "rank {}'s weights differ from rank 0's after step {}: the ranks no "
           "longer train one model (a non-deterministic reduction?)", comm.rank(), step);
}

}  // namespace normlab
