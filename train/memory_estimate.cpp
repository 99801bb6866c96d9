#include "train/memory_estimate.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/bytes.h"
#include "core/device.h"
#include "core/error.h"
#include "nn/attention.h"
#include "nn/block.h"
#include "nn/placement.h"
#include "nn/norm_kinds.h"

namespace normlab {

namespace {

// Norm layers in a stack, by the placement row's wiring of each layer (nn/placement.h).
double stack_norms(const ModelConfig& m, const Stack& s) {
  const PlacementKind& row = placement_kind(m.norm_placement);
  double norms = 0;
  for (int64_t l = 0; l < s.layers; ++l)
    norms += static_cast<double>(norms_of_wiring(placement_wiring(row, l, s)) * s.sublayers());
  return norms;
}

// (N, C) tensors a stack's row keeps beyond the plain wiring: each sub-layer's scaled shortcut
// (deepnorm, admin) and each B2T layer's extra sum.
double stack_extra_tensors(const ModelConfig& m, const Stack& s) {
  const PlacementKind& row = placement_kind(m.norm_placement);
  double extra = placement_shortcut_scale(row, s) != 1.0 ? static_cast<double>(s.sublayers() * s.layers) : 0;
  for (int64_t l = 0; row.bottom_to_top && l < s.layers; ++l) extra += placement_wiring(row, l, s) == Wiring::Post;
  return extra;
}

bool gated_ffn(const ModelConfig& m) { return m.ffn_type == FfnType::SwiGlu || m.ffn_type == FfnType::GeGlu; }

// Elements of the parameters: embeddings, per block 4 C x C attention matrices and the FFN's two
// or three C x F matrices (with biases when model.bias), per norm a weight (and a bias for the
// norms that have one), the final norm, and an untied head.
double parameter_elements(const ModelConfig& m) {
  const double C = static_cast<double>(m.d_model), F = static_cast<double>(m.d_ff);
  const double V = static_cast<double>(m.vocab_size), L = static_cast<double>(m.n_layers);
  const double ffn_mats = gated_ffn(m) ? 3 : 2;
  const double Q = static_cast<double>(m.n_heads * head_dim_of(m));      // query width H D
  const double KV = static_cast<double>(kv_heads_of(m) * head_dim_of(m));  // key/value width K D
  double block = 2 * C * Q + 2 * C * KV + ffn_mats * C * F;
  if (m.bias) block += Q + 2 * KV + C + (ffn_mats - 1) * F + C;
  if (m.ffn_type == FfnType::Moe) {  // E SwiGLU experts and the router (E, C), which has no bias
    const double E = static_cast<double>(m.n_experts);
    block = 2 * C * Q + 2 * C * KV + E * 3 * C * F + E * C;
    if (m.bias) block += Q + 2 * KV + C + E * (2 * F + C);
  }
  double per_norm = 0;  // the norm's parameters (nn/norm_kinds.h)
  for (const NormParam& p : norm_params(m)) per_norm += p.per_channel ? C : 1;
  const double positions = m.position_embedding == PositionEmbedding::Learned ? static_cast<double>(m.context_length) * C : 0;
  const double final_norm = placement_has_final_norm(m.norm_placement) ? per_norm : 0;
  if (m.arch == ModelArch::EncoderDecoder) {
    // Two stacks (nn/seq2seq_layer.h): a decoder layer adds cross-attention and its norm(s); a
    // final norm and positions per stack; untied: src_emb, tok_emb and lm_head.
    const double cross = 2 * C * Q + 2 * C * KV + (m.bias ? Q + 2 * KV + C : 0);
    const double E = static_cast<double>(encoder_layers_of(m));
    const double norms = stack_norms(m, encoder_stack(m)) + stack_norms(m, decoder_stack(m));
    return (m.tie_embeddings ? 1 : 3) * V * C + 2 * positions + E * block + L * (block + cross) + norms * per_norm +
           2 * final_norm;
  }
  return (m.tie_embeddings ? 1 : 2) * V * C + positions + L * block + stack_norms(m, single_stack(m)) * per_norm +
         final_norm;
}

// Elements the tape keeps alive at the end of the forward pass (every op output is kept by its
// node until backward reaches it), with N = B T tokens, per block:
//   attention: q, k, v (3 NC), their head-split copies (3 NC), scores and probabilities
//   (2 B H T^2: the scale is inside the softmax), the weighted values, their merged copy and the
//   output (3 NC);
//   FFN: hidden and activation (2 NF; gated: both branches and their product, 4 NF), output (NC);
//   two residual sums (2 NC); each norm's kept tensors and statistics (nn/norm_kinds.h: LayerNorm
//   NC + 2 N, GroupNorm NC + 2 N G, a composed norm every op output it keeps);
//   the row's scaled shortcuts (deepnorm, admin: NC per sub-layer) and B2T's extra sum (NC per
//   layer); with dropout, the two sites' masks and outputs (4 NC).
// Plus the embeddings (2 NC + T C), the final norm, the logits (N V) and their gradient (N V,
// created by the loss's backward while everything above is still alive), and backward's working
// set inside a block: the incoming gradient and its result for the largest tensors there (the
// attention scores or the FFN's hidden layer) and for two (B, T, C) ones.
double activation_elements(const RunConfig& c) {
  const ModelConfig& m = c.model;
  const double B = static_cast<double>(c.train.batch_size), T = static_cast<double>(c.train.context);
  const double N = B * T, C = static_cast<double>(m.d_model), F = static_cast<double>(m.d_ff);
  const double H = static_cast<double>(m.n_heads), V = static_cast<double>(m.vocab_size);
  const bool dropout = m.dropout > 0;
  const NormKind& norm = norm_kind(m.norm_type);
  const double groups = norm.grouped ? static_cast<double>(m.norm_groups) : 1;
  const double per_norm = norm.kept_tensors * N * C + norm.kept_row_statistics * N * groups;
  const double Q = static_cast<double>(m.n_heads * head_dim_of(m));
  const double KV = static_cast<double>(kv_heads_of(m) * head_dim_of(m));
  // q, k, v and their head-split copies, rotated copies of q and k (rope), weighted values and
  // their merged copy, output: 9 NC for plain multi-head attention with learned positions.
  double block = 2 * N * (Q + 2 * KV) + 2 * N * Q + N * C + 2 * B * H * T * T;
  if (m.position_embedding == PositionEmbedding::Rope) block += N * (Q + KV);
  if (m.ffn_type == FfnType::Moe) {
    // N k (token, expert) rows: gathered inputs, the SwiGLU's 4 (n_e, F) tensors, the expert
    // output, its weighted copy; per expert a scattered (N, C) sum, and E - 1 running totals (the
    // last is the output); the router's logits and probabilities, the chosen weights (N, E and N k).
    const double K = static_cast<double>(m.experts_top_k), E = static_cast<double>(m.n_experts);
    block += 4 * N * K * F + 3 * N * K * C + (2 * E - 1) * N * C + 2 * N * E + 4 * N * K;
  } else {
    block += (gated_ffn(m) ? 4 : 2) * N * F + N * C;
  }
  block += 2 * N * C;
  if (dropout) block += 4 * N * C;
  const Stack stack = m.arch == ModelArch::EncoderDecoder ? decoder_stack(m) : single_stack(m);
  double total = static_cast<double>(m.n_layers) * block + stack_norms(m, stack) * per_norm +
                 stack_extra_tensors(m, stack) * N * C;
  double embedding = 2 * N * C + (m.position_embedding == PositionEmbedding::Learned ? T * C : 0) + (dropout ? 2 * N * C : 0);
  double final_norm = placement_has_final_norm(m.norm_placement) ? per_norm : 0;
  if (m.arch == ModelArch::EncoderDecoder) {
    // The encoder stack as the decoder's (sources padded to at most train.context tokens), and per
    // decoder layer a cross-attention over it (q from the decoder, k, v from the memory: the
    // attention terms above), its residual sum and norm(s).
    const double cross = 2 * N * (Q + 2 * KV) + 2 * N * Q + N * C + 2 * B * H * T * T;
    const Stack encoder = encoder_stack(m);
    total += static_cast<double>(encoder.layers) * block + stack_norms(m, encoder) * per_norm +
             stack_extra_tensors(m, encoder) * N * C +
             static_cast<double>(m.n_layers) * (cross + N * C + (dropout ? 2 * N * C : 0));
    embedding *= 2;
    final_norm *= 2;
  }
  total += embedding + final_norm;
  const double ffn_hidden = N * F * (m.ffn_type == FfnType::Moe ? static_cast<double>(m.experts_top_k) : 1);
  const double backward = 2 * std::max(B * H * T * T, ffn_hidden) + 2 * N * C;
  return total + 2 * N * V + backward;
}

// Optimizer state per parameter element: Adam, AdamW and RAdam keep m and v; SGD a momentum
// buffer when momentum > 0.
double optimizer_slots(const OptimConfig& o) {
  if (o.name == OptimizerKind::Sgd) return o.momentum > 0 ? 1 : 0;
  return 2;
}

double element_bytes(const ModelConfig& m) { return m.dtype == ParamDType::Float64 ? 8 : 4; }

}  // namespace

MemoryEstimate estimate_training_memory(const RunConfig& config) {
  const double bytes = element_bytes(config.model);
  MemoryEstimate e;
  e.parameters = parameter_elements(config.model) * bytes;
  e.gradients = e.parameters;
  e.optimizer = optimizer_slots(config.optim) * e.parameters;
  e.activations = activation_elements(config) * bytes;
  return e;
}

namespace {

// The first number in a file such as memory.max ("max" and unreadable files give nullopt).
std::optional<double> read_number(const std::filesystem::path& path) {
  std::ifstream in(path);
  double value = 0;
  if (!(in >> value)) return std::nullopt;
  return value;
}

// The number after `key` on its line of a "key value" file: /proc/meminfo's "MemAvailable:  123 kB"
// (in kB), memory.stat's "inactive_file 456" (in bytes).
std::optional<double> read_field(const std::filesystem::path& path, const std::string& key) {
  std::ifstream in(path);
  std::string line, name;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    double value = 0;
    if (fields >> name >> value && (name == key || name == key + ":")) return value;
  }
  return std::nullopt;
}

// A cgroup version's file names. Usage counts the page cache, of which the inactive files are
// reclaimable: they count as available, as in `docker stats`.
struct CgroupFiles {
  const char *limit, *usage, *inactive;
};
constexpr CgroupFiles kCgroupV2{"memory.max", "memory.current", "inactive_file"};
constexpr CgroupFiles kCgroupV1{"memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"};

// The tightest limit - (usage - inactive files) over a cgroup directory and its ancestors up to `root`.
std::optional<double> cgroup_headroom(const std::filesystem::path& root, const std::string& group,
                                      const CgroupFiles& files) {
  std::optional<double> best;
  for (std::filesystem::path dir = root / std::filesystem::path(group).relative_path();;
       dir = dir.parent_path()) {
    const auto limit = read_number(dir / files.limit), usage = read_number(dir / files.usage);
    if (limit && usage && *limit < 1e18) {
      const double room = *limit - (*usage - read_field(dir / "memory.stat", files.inactive).value_or(0));
      best = std::min(best.value_or(room), room);
    }
    if (dir == root || dir.parent_path() == dir) break;
  }
  return best;
}

}  // namespace

std::optional<double> cgroup_memory_headroom(const std::filesystem::path& proc_cgroup,
                                             const std::filesystem::path& mount) {
  std::ifstream in(proc_cgroup);
  std::string line;
  std::optional<double> best;
  while (std::getline(in, line)) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), group = line.substr(b + 1);
    std::optional<double> room;
    if (line.rfind("0::", 0) == 0) room = cgroup_headroom(mount, group, kCgroupV2);
    else if (("," + controllers + ",").find(",memory,") != std::string::npos)
      room = cgroup_headroom(mount / "memory", group, kCgroupV1);
    if (room) best = std::min(best.value_or(*room), *room);
  }
  return best;
}

namespace {

// RLIMIT_AS (ulimit -v) minus the address space already mapped.
std::optional<double> address_space_headroom() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  const auto mapped_kib = read_field("/proc/self/status", "VmSize");
  if (!mapped_kib) return std::nullopt;
  return static_cast<double>(limit.rlim_cur) - *mapped_kib * 1024.0;
}

bool skip_requested() {
  const char* v = std::getenv("NORMLAB_SKIP_MEMORY_CHECK");
  return v != nullptr && std::string(v) != "" && std::string(v) != "0";
}

}  // namespace

std::optional<AvailableMemory> available_host_memory() {
  std::optional<AvailableMemory> best;
  const auto consider = [&](std::optional<double> bytes, const char* source) {
    if (bytes && (!best || *bytes < best->bytes)) best = AvailableMemory{std::max(*bytes, 0.0), source};
  };
  const auto mem_available_kib = read_field("/proc/meminfo", "MemAvailable");
  consider(mem_available_kib ? std::optional<double>(*mem_available_kib * 1024.0) : std::nullopt, "MemAvailable");
  consider(cgroup_memory_headroom(), "cgroup memory limit");
  consider(address_space_headroom(), "ulimit -v");
  return best;
}

std::string describe_memory(const MemoryEstimate& e, const RunConfig& config,
                            const std::optional<AvailableMemory>& available) {
  std::string line = fmt::format(
      "memory estimate: params {}, grads {}, optimizer {} ({}), activations {} = {}; ",
      format_bytes(e.parameters), format_bytes(e.gradients), format_bytes(e.optimizer), enum_name(config.optim.name),
      format_bytes(e.activations), format_bytes(e.total()));
  if (config.train.device.kind != DeviceKind::CPU)
    return line + fmt::format("not checked against {} memory", config.train.device.str());
  if (!available) return line + "available memory unknown";
  return line + fmt::format("available {} ({})", format_bytes(available->bytes), available->source);
}

DominantKey dominant_memory_key(const RunConfig& config) {
  struct SizeKey {
    const char* name;
    int64_t* (*field)(RunConfig&);
  };
  static const SizeKey keys[] = {
      {"train.batch_size", [](RunConfig& c) { return &c.train.batch_size; }},
      {"train.context", [](RunConfig& c) { return &c.train.context; }},
      {"model.context_length", [](RunConfig& c) { return &c.model.context_length; }},
      {"model.n_layers", [](RunConfig& c) { return &c.model.n_layers; }},
      {"model.d_ff", [](RunConfig& c) { return &c.model.d_ff; }},
      {"model.n_experts", [](RunConfig& c) { return &c.model.n_experts; }},
      {"model.d_model", [](RunConfig& c) { return &c.model.d_model; }},  // last: every size scales with it
  };
  const double total = estimate_training_memory(config).total();
  std::vector<DominantKey> halvings;
  for (const SizeKey& key : keys) {
    RunConfig halved = config;
    int64_t* value = key.field(halved);
    if (*value < 2) continue;
    *value /= 2;
    halvings.push_back({key.name, estimate_training_memory(halved).total()});
  }
  double least = total;
  for (const DominantKey& h : halvings) least = std::min(least, h.halved_total);
  // Keys that save about as much (within 1% of the estimate): the first in the list's order.
  for (const DominantKey& h : halvings)
    if (h.halved_total < total && h.halved_total <= least + 0.01 * total) return h;
  return {"", total};
}

void check_training_memory(const RunConfig& config, bool quiet) {
  const MemoryEstimate e = estimate_training_memory(config);
  const bool cpu = config.train.device.kind == DeviceKind::CPU;
  const std::optional<AvailableMemory> available = cpu ? available_host_memory() : std::nullopt;
  if (!quiet) fmt::print(stderr, "{}\n", describe_memory(e, config, available));
  if (!available || e.total() <= available->bytes) return;
  const std::string problem = fmt::format("memory estimate {} exceeds the {} available ({})",
                                          format_bytes(e.total()), format_bytes(available->bytes),
                                          available->source);
  const DominantKey key = dominant_memory_key(config);
  const std::string dominant =
      key.key.empty() ? ""
                      : fmt::format("; halving {} saves the most: {} (the estimate becomes {})", key.key,
                                    format_bytes(e.total() - key.halved_total), format_bytes(key.halved_total));
  if (!skip_requested())
    fail("train", "{}{}: lower it, train.batch_size, train.context or the model's size, or set "
         "NORMLAB_SKIP_MEMORY_CHECK=1 to try anyway", problem, dominant);
  if (!quiet) fmt::print(stderr, "warning: {}; NORMLAB_SKIP_MEMORY_CHECK is set: going on\n", problem);
}

}  // namespace normlab
