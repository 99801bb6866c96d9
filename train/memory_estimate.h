// Before a run trains: how much memory it will need, estimated from the config alone, against how
// much this process can still get. train() prints one line,
//   memory estimate: params 4.6 MiB, grads 4.6 MiB, optimizer 9.2 MiB (adam), activations 65.3 MiB
//   = 83.7 MiB; available 21.4 GiB (MemAvailable)
// and refuses to start a CPU run whose estimate exceeds what is available, before allocating
// anything. NORMLAB_SKIP_MEMORY_CHECK=1 in the environment turns the refusal into a warning.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "config/run_config.h"

namespace normlab {

// Bytes held by one training step, from the shapes the config implies (computed in double: no
// size here can overflow). Parameters and optimizer state are exact; activations count every
// tensor the tape keeps from the forward pass for the backward (all op outputs, the norms'
// statistics, dropout masks) plus the logits' gradient, which backward creates while they are all
// alive. The sum bounds the peak from above: backward frees the activations layer by layer while
// it creates the gradients, so both are never alive in full at once.
struct MemoryEstimate {
  double parameters = 0, gradients = 0, optimizer = 0, activations = 0;
  double total() const { return parameters + gradients + optimizer + activations; }
};

// config.model.vocab_size must already be the dataset's (train() sets it before calling this).
MemoryEstimate estimate_training_memory(const RunConfig& config);

struct AvailableMemory {
  double bytes = 0;
  std::string source;  // what limits it: "MemAvailable", "cgroup memory limit" or "ulimit -v"
};
// The least of /proc/meminfo's MemAvailable, the memory cgroup's limit minus its usage less the
// reclaimable inactive file cache (v1 or v2, over the process's cgroup and its ancestors) and
// RLIMIT_AS minus the process's VmSize; nullopt when none of them can be read.
std::optional<AvailableMemory> available_host_memory();

// The memory cgroup's headroom from the cgroup list `proc_cgroup` (v2 "0::/path", v1
// "N:memory:/path") and the cgroup filesystem mounted at `mount` (v1: its "memory" hierarchy):
// the least of limit - (usage - inactive file cache) over the process's cgroup and its ancestors,
// nullopt when none has a limit.
std::optional<double> cgroup_memory_headroom(const std::filesystem::path& proc_cgroup = "/proc/self/cgroup",
                                             const std::filesystem::path& mount = "/sys/fs/cgroup");

// The one line above (without a trailing newline).
std::string describe_memory(const MemoryEstimate& estimate, const RunConfig& config,
                            const std::optional<AvailableMemory>& available);

// The size key whose halving lowers the estimate most, and the estimate with it halved: what a
// refusal names ("model.context_length weighs most"). Keys that save within 1% of the estimate as
// much go in the order batch_size, context, context_length, n_layers, d_ff, n_experts, d_model
// (d_model last: every size scales with it). key "" when no key's halving lowers it.
struct DominantKey {
  std::string key;
  double halved_total = 0;
};
DominantKey dominant_memory_key(const RunConfig& config);

// Prints the line to stderr unless quiet; throws "[train] memory estimate ... exceeds ..." when a
// CPU run's total exceeds what is available (NORMLAB_SKIP_MEMORY_CHECK=1: a warning instead).
void check_training_memory(const RunConfig& config, bool quiet);

}  // namespace normlab
