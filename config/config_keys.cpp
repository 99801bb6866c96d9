// The config keys: one line per struct field. To add a field to a config struct, add one
// `.key(...)` line here (with its validator); reading, writing and round-trip tests follow.
#include "config/config_keys.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "core/error.h"
#include "core/named_enum.h"
#include "config/suggest.h"
#include "config/toml_codec.h"

namespace normlab::config_detail {
namespace {

template <typename T> using Check = std::function<std::string(const T&)>;

// --- integer keys: an integer, or a float with an integral value (1e5), within [low, high] ---
struct IntRange {
  int64_t low;
  int64_t high = std::numeric_limits<int64_t>::max();
};
// The largest count of steps (and of anything counted in steps): 2^53, exact as a double.
constexpr int64_t kMaxCount = int64_t{1} << 53;

// "" when fine, else the problem after the key name (": expected an integer, got float 1.5",
// " must be an integer <= 9007199254740992, got float 1e+30", " must be >= 1, got 0").
std::string read_integer(const toml::node& node, IntRange range, int64_t& out) {
  if (auto v = node.as_integer()) {
    out = v->get();
    if (out < range.low) return fmt::format(" must be >= {}, got {}", range.low, out);
    if (out > range.high) return fmt::format(" must be <= {}, got {}", range.high, out);
    return "";
  }
  auto f = node.as_floating_point();
  if (!f || !std::isfinite(f->get()) || f->get() != std::floor(f->get()))
    return ": expected an integer, got " + describe_node(node);
  // Compared as doubles; both bounds are exact doubles or round to the nearest one, as 2^63 - 1 does.
  if (f->get() < static_cast<double>(range.low))
    return fmt::format(" must be an integer >= {}, got {}", range.low, describe_node(node));
  if (f->get() > static_cast<double>(range.high) || f->get() >= 0x1p63)
    return fmt::format(" must be an integer <= {}, got {}", range.high, describe_node(node));
  out = static_cast<int64_t>(f->get());
  return "";
}

// --- validators: "" when fine, else the problem ("must be > 0, got -1") ---
template <typename T> Check<T> greater_than(T low) {
  return [low](const T& v) { return v > low ? "" : fmt::format("must be > {}, got {}", low, v); };
}
template <typename T> Check<T> at_least(T low) {
  return [low](const T& v) { return v >= low ? "" : fmt::format("must be >= {}, got {}", low, v); };
}
Check<double> in_zero_one(bool open_low) {  // [0, 1) or (0, 1)
  return [open_low](const double& v) {
    const bool ok = (open_low ? v > 0 : v >= 0) && v < 1;
    return ok ? "" : fmt::format("must be in {}0, 1), got {}", open_low ? "(" : "[", v);
  };
}
Check<std::string> one_of(std::vector<std::string> names) {
  return [names](const std::string& v) -> std::string {
    for (const auto& n : names)
      if (n == v) return "";
    return fmt::format("must be one of {}; got '{}'{}", fmt::join(names, ", "), v,
                       did_you_mean(v, names));
  };
}
Check<std::string> not_empty() {
  return [](const std::string& v) { return v.empty() ? "must not be empty" : ""; };
}
Check<std::string> directory_name() {
  return [](const std::string& v) -> std::string {
    if (v.empty() || v == "." || v == ".." || v.find('/') != std::string::npos)
      return fmt::format("must be a plain directory name (not empty, no '/'), got '{}'", v);
    return "";
  };
}
// A string naming one of the enum's values (EnumNames<E>, the only list of them), or the problem
// (" must be one of post, pre, ...; got 'psot' (did you mean 'post'?)").
template <typename E> std::string read_enum(const toml::node& node, E& out) {
  std::string error;
  const std::optional<std::string> text = convert(node, static_cast<std::string*>(nullptr), error);
  if (!text) return ": " + error;
  if (const std::optional<E> value = parse_enum<E>(*text)) {
    out = *value;
    return "";
  }
  const std::vector<std::string> names = enum_names<E>();
  return fmt::format(" must be one of {}; got '{}'{}", fmt::join(names, ", "), *text, did_you_mean(*text, names));
}
std::string read_device(const toml::node& node, Device& out) {
  std::string error;
  const std::optional<std::string> v = convert(node, static_cast<std::string*>(nullptr), error);
  if (!v) return ": " + error;
  try {
    out = parse_device(*v);  // the one list of device names
  } catch (const Error&) {
    return fmt::format(" must be cpu, cuda or cuda:N; got '{}'", *v);
  }
  return "";
}

// Appends one KeySpec per .key(...) call for the fields of section struct S.
template <typename S> struct Section {
  std::vector<KeySpec>& out;
  std::string name;
  S RunConfig::*member;

  // Reads a node into a field's type: "" or the problem, which follows the key name (": expected
  // a float, got ...", " must be > 0, got -1").
  template <typename T> using Reader = std::function<std::string(const toml::node&, T&)>;

  template <typename T>
    requires(!std::is_enum_v<T>)
  Section& key(const std::string& key, T S::*field, Check<T> check = {}) {
    return add<T>(key, field, [check](const toml::node& node, T& value) -> std::string {
      std::string error;
      std::optional<T> converted = convert(node, static_cast<T*>(nullptr), error);
      if (!converted) return ": " + error;
      const std::string problem = check ? check(*converted) : "";
      if (!problem.empty()) return " " + problem;
      value = *converted;
      return "";
    });
  }
  template <typename E> requires std::is_enum_v<E> Section& key(const std::string& key, E S::*field) {
    return add<E>(key, field, read_enum<E>);
  }
  Section& key(const std::string& key, Device S::*field) { return add<Device>(key, field, read_device); }
  Section& key(const std::string& key, int64_t S::*field, IntRange range) {
    return add<int64_t>(key, field, [range](const toml::node& node, int64_t& value) {
      return read_integer(node, range, value);
    });
  }

 private:
  template <typename T> Section& add(const std::string& key, T S::*field, Reader<T> read) {
    KeySpec spec;
    spec.section = name;
    spec.name = key;
    spec.is_string = std::is_same_v<T, std::string> || std::is_same_v<T, Device> || std::is_enum_v<T>;
    auto member_ = member;
    spec.set = [member_, field, key, read](RunConfig& config, const toml::node& node) -> std::string {
      T value{};
      const std::string problem = read(node, value);
      if (!problem.empty()) return key + problem;
      (config.*member_).*field = value;
      return "";
    };
    spec.get = [member_, field](const RunConfig& config) { return toml_text((config.*member_).*field); };
    out.push_back(std::move(spec));
    return *this;
  }
};

void add_model_keys(std::vector<KeySpec>& t) {
  Section<ModelConfig>{t, "model", &RunConfig::model}
      .key("vocab_size", &ModelConfig::vocab_size, IntRange{1})
      .key("d_model", &ModelConfig::d_model, IntRange{1})
      .key("n_heads", &ModelConfig::n_heads, IntRange{1})
      .key("n_layers", &ModelConfig::n_layers, IntRange{1})
      .key("d_ff", &ModelConfig::d_ff, IntRange{1})
      .key("context_length", &ModelConfig::context_length, IntRange{1})
      .key("n_kv_heads", &ModelConfig::n_kv_heads, IntRange{0})
      .key("head_dim", &ModelConfig::head_dim, IntRange{0})
      .key("position_embedding", &ModelConfig::position_embedding)
      .key("rope_theta", &ModelConfig::rope_theta, greater_than(0.0))
      .key("sliding_window", &ModelConfig::sliding_window, IntRange{0})
      .key("padding_idx", &ModelConfig::padding_idx, IntRange{-1})
      .key("norm_type", &ModelConfig::norm_type)
      .key("norm_eps", &ModelConfig::norm_eps, greater_than(0.0))
      .key("norm_groups", &ModelConfig::norm_groups, IntRange{1})
      .key("norm_placement", &ModelConfig::norm_placement)
      .key("ffn_type", &ModelConfig::ffn_type)
      .key("n_experts", &ModelConfig::n_experts, IntRange{1})
      .key("experts_top_k", &ModelConfig::experts_top_k, IntRange{1})
      .key("router_aux_loss_coef", &ModelConfig::router_aux_loss_coef, at_least(0.0))
      .key("bias", &ModelConfig::bias)
      .key("dropout", &ModelConfig::dropout, in_zero_one(false))
      .key("tie_embeddings", &ModelConfig::tie_embeddings)
      .key("embedding_scale", &ModelConfig::embedding_scale)
      .key("init", &ModelConfig::init)
      .key("seed", &ModelConfig::seed)
      .key("dtype", &ModelConfig::dtype);
}

void add_optim_keys(std::vector<KeySpec>& t) {
  Section<OptimConfig>{t, "optim", &RunConfig::optim}
      .key("name", &OptimConfig::name)
      .key("lr", &OptimConfig::lr, greater_than(0.0))
      .key("beta1", &OptimConfig::beta1, in_zero_one(false))
      .key("beta2", &OptimConfig::beta2, in_zero_one(false))
      .key("eps", &OptimConfig::eps, greater_than(0.0))
      .key("momentum", &OptimConfig::momentum, in_zero_one(false))
      .key("weight_decay", &OptimConfig::weight_decay, at_least(0.0))
      .key("decay_norms_and_biases", &OptimConfig::decay_norms_and_biases)
      .key("decay_embeddings", &OptimConfig::decay_embeddings)
      .key("grad_clip", &OptimConfig::grad_clip, at_least(0.0));
}

void add_schedule_keys(std::vector<KeySpec>& t) {
  Section<ScheduleConfig>{t, "schedule", &RunConfig::schedule}
      .key("kind", &ScheduleConfig::kind)
      .key("warmup_steps", &ScheduleConfig::warmup_steps, IntRange{0, kMaxCount})
      .key("decay_every", &ScheduleConfig::decay_every, IntRange{1, kMaxCount})
      .key("decay_start", &ScheduleConfig::decay_start, IntRange{0, kMaxCount})
      .key("decay_factor", &ScheduleConfig::decay_factor, greater_than(0.0))
      .key("min_lr", &ScheduleConfig::min_lr, at_least(0.0));
}

void add_data_keys(std::vector<KeySpec>& t) {
  Section<DataConfig>{t, "data", &RunConfig::data}
      .key("source", &DataConfig::source, not_empty())
      .key("tokenizer", &DataConfig::tokenizer, one_of({"char", "byte"}))
      .key("val_fraction", &DataConfig::val_fraction, in_zero_one(true))
      .key("copy_length", &DataConfig::copy_length, IntRange{1})
      .key("copy_vocab", &DataConfig::copy_vocab, IntRange{2, std::numeric_limits<int32_t>::max()});  // int32 ids
}

void add_train_keys(std::vector<KeySpec>& t) {
  Section<TrainConfig>{t, "train", &RunConfig::train}
      .key("name", &TrainConfig::name, directory_name())
      .key("out_dir", &TrainConfig::out_dir, not_empty())
      .key("steps", &TrainConfig::steps, IntRange{1, kMaxCount})
      .key("batch_size", &TrainConfig::batch_size, IntRange{1})
      .key("context", &TrainConfig::context, IntRange{1})
      .key("seed", &TrainConfig::seed)
      .key("threads", &TrainConfig::threads, at_least(0))
      .key("device", &TrainConfig::device)
      .key("divergence_loss", &TrainConfig::divergence_loss, at_least(0.0))
      .key("fail_on_divergence", &TrainConfig::fail_on_divergence)
      .key("checkpoint_every", &TrainConfig::checkpoint_every, IntRange{0, kMaxCount})
      .key("precision", &TrainConfig::precision)
      .key("loss_scale_init", &TrainConfig::loss_scale_init, greater_than(0.0))
      .key("loss_scale_growth_interval", &TrainConfig::loss_scale_growth_interval, IntRange{1, kMaxCount})
      .key("detect_anomaly", &TrainConfig::detect_anomaly);
}

void add_log_keys(std::vector<KeySpec>& t) {
  Section<LogConfig>{t, "log", &RunConfig::log}
      .key("every", &LogConfig::every, IntRange{1, kMaxCount})
      .key("eval_every", &LogConfig::eval_every, IntRange{1, kMaxCount})
      .key("eval_batches", &LogConfig::eval_batches, IntRange{1, kMaxCount})
      .key("grad_norm_every", &LogConfig::grad_norm_every, IntRange{1, kMaxCount})
      .key("tensorboard", &LogConfig::tensorboard);
}

std::vector<KeySpec> build_key_specs() {
  std::vector<KeySpec> t;
  add_model_keys(t);
  add_optim_keys(t);
  add_schedule_keys(t);
  add_data_keys(t);
  add_train_keys(t);
  add_log_keys(t);
  return t;
}

// A 16-bit train.precision needs float32 master weights ("" when it fits). It runs on the CPU and
// on CUDA (16-bit GEMMs and row norms there, the other ops staged through float32).
std::string precision_conflict(const RunConfig& r) {
  if (r.train.precision == Precision::Fp32) return "";
  if (r.model.dtype != ParamDType::Float32)
    return fmt::format("precision '{}' keeps float32 master weights: model.dtype must be \"float32\", got \"{}\"",
                       enum_name(r.train.precision), r.model.dtype);
  return "";
}

std::vector<CrossCheck> build_cross_checks() {
  std::vector<CrossCheck> c;
  c.push_back({"model", {"model.d_model", "model.n_heads", "model.head_dim"}, [](const RunConfig& r) {
                 const ModelConfig& m = r.model;
                 return m.head_dim > 0 || m.d_model % m.n_heads == 0
                            ? ""
                            : fmt::format("d_model ({}) must be divisible by n_heads ({}) unless head_dim is set",
                                          m.d_model, m.n_heads);
               }});
  c.push_back({"model", {"model.n_heads", "model.n_kv_heads"}, [](const RunConfig& r) {
                 const ModelConfig& m = r.model;
                 return m.n_kv_heads == 0 || m.n_heads % m.n_kv_heads == 0
                            ? ""
                            : fmt::format("n_heads ({}) must be a multiple of n_kv_heads ({})", m.n_heads,
                                          m.n_kv_heads);
               }});
  c.push_back({"model", {"model.padding_idx", "model.vocab_size"}, [](const RunConfig& r) {
                 const ModelConfig& m = r.model;
                 return m.padding_idx < m.vocab_size
                            ? ""
                            : fmt::format("padding_idx ({}) must be < vocab_size ({})", m.padding_idx,
                                          m.vocab_size);
               }});
  c.push_back({"model", {"model.norm_type", "model.d_model", "model.norm_groups"},
               [](const RunConfig& r) {
                 const ModelConfig& m = r.model;
                 if (m.norm_type != NormType::GroupNorm || m.d_model % m.norm_groups == 0) return std::string();
                 return fmt::format("d_model ({}) must be divisible by norm_groups ({}) for groupnorm",
                                    m.d_model, m.norm_groups);
               }});
  c.push_back({"model", {"model.ffn_type", "model.n_experts", "model.experts_top_k"},
               [](const RunConfig& r) {
                 const ModelConfig& m = r.model;
                 if (m.ffn_type != FfnType::Moe || m.experts_top_k <= m.n_experts) return std::string();
                 return fmt::format("experts_top_k ({}) must be <= n_experts ({}) for ffn_type 'moe'",
                                    m.experts_top_k, m.n_experts);
               }});
  c.push_back({"train", {"train.context", "model.context_length"}, [](const RunConfig& r) {
                 return r.train.context <= r.model.context_length
                            ? ""
                            : fmt::format("context ({}) must be <= model.context_length ({})",
                                          r.train.context, r.model.context_length);
               }});
  c.push_back({"train", {"train.precision", "model.dtype"}, precision_conflict});
  c.push_back({"schedule", {"schedule.kind", "schedule.warmup_steps"}, [](const RunConfig& r) {
                 return r.schedule.kind != ScheduleKind::InverseSqrt || r.schedule.warmup_steps >= 1
                            ? ""
                            : std::string("kind 'inverse_sqrt' needs warmup_steps >= 1, got 0");
               }});
  c.push_back({"schedule", {"schedule.kind", "schedule.warmup_steps", "train.steps"}, [](const RunConfig& r) {
                 const ScheduleConfig& s = r.schedule;
                 const bool decays = s.kind == ScheduleKind::Linear || s.kind == ScheduleKind::Cosine;
                 return !decays || s.warmup_steps < r.train.steps
                            ? ""
                            : fmt::format("schedule.warmup_steps ({}) must be < train.steps ({}): kind '{}' "
                                          "decays from the end of the warmup to min_lr at train.steps",
                                          s.warmup_steps, r.train.steps, enum_name(s.kind));
               }});
  c.push_back({"schedule", {"schedule.min_lr", "optim.lr"}, [](const RunConfig& r) {
                 return r.schedule.min_lr <= r.optim.lr
                            ? ""
                            : fmt::format("min_lr ({}) must be <= optim.lr ({})", r.schedule.min_lr,
                                          r.optim.lr);
               }});
  return c;
}

}  // namespace

const std::vector<std::string>& section_names() {
  static const std::vector<std::string> names = {"model", "optim", "schedule", "data", "train", "log"};
  return names;
}
const std::vector<KeySpec>& key_specs() {
  static const std::vector<KeySpec> specs = build_key_specs();
  return specs;
}
const std::vector<CrossCheck>& cross_checks() {
  static const std::vector<CrossCheck> checks = build_cross_checks();
  return checks;
}


}  // namespace normlab::config_detail
