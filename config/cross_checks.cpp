// The checks that involve several config keys, run after the whole configuration has been read
// (config_keys.h CrossCheck): each names the keys it reads, so the message points at where the
// last of them was set.
#include <fmt/format.h>

#include <functional>

#include "config/config_keys.h"
#include "core/error.h"
#include "core/named_enum.h"
#include "data/seq2seq.h"
#include "nn/norm_kinds.h"
#include "optim/lr_multipliers.h"

namespace normlab::config_detail {
namespace {

// A 16-bit train.precision needs float32 master weights ("" when it fits). It runs on the CPU and
// on CUDA (16-bit GEMMs and row norms there, the other ops staged through float32).
std::string precision_conflict(const RunConfig& r) {
  if (r.train.precision == Precision::Fp32) return "";
  if (r.model.dtype != ParamDType::Float32)
    return fmt::format("precision '{}' keeps float32 master weights: model.dtype must be \"float32\", got \"{}\"",
                       enum_name(r.train.precision), r.model.dtype);
  return "";
}

// The message of a parser's error without its "[op] " prefix ("" when it parses).
std::string parse_error(const std::function<void()>& parse) {
  try {
    parse();
  } catch (const Error& e) {
    const std::string what = e.what();
    const size_t end = what.find("] ");
    return what.front() == '[' && end != std::string::npos ? what.substr(end + 2) : what;
  }
  return "";
}

std::vector<CrossCheck> build_cross_checks() {
  std::vector<CrossCheck> c;
  c.push_back({"model", {"model.arch", "data.source"}, [](const RunConfig& r) {
                 const bool pairs = is_seq2seq_source(r.data.source);
                 if (r.model.arch == ModelArch::EncoderDecoder && !pairs)
                   return fmt::format("arch 'encoder_decoder' trains on sequence pairs: data.source must be "
                                      "\"pairs:PATH\", \"seq2seq_copy\", \"seq2seq_reverse\" or "
                                      "\"seq2seq_translate\", got \"{}\"",
                                      r.data.source);
                 if (r.model.arch != ModelArch::EncoderDecoder && pairs)
                   return fmt::format("data.source \"{}\" holds sequence pairs: it needs model.arch = "
                                      "\"encoder_decoder\", got \"{}\"",
                                      r.data.source, r.model.arch);
                 return std::string();
               }});
  c.push_back({"log", {"model.arch", "log.bleu_pairs"}, [](const RunConfig& r) {
                 return r.log.bleu_pairs == 0 || r.model.arch == ModelArch::EncoderDecoder
                            ? std::string()
                            : fmt::format("bleu_pairs ({}) scores translations: it needs model.arch = "
                                          "\"encoder_decoder\", got \"{}\"",
                                          r.log.bleu_pairs, r.model.arch);
               }});
  c.push_back({"model", {"model.arch", "model.sliding_window"}, [](const RunConfig& r) {
                 const ModelConfig& m = r.model;
                 return m.arch != ModelArch::Encoder || m.sliding_window == 0
                            ? ""
                            : fmt::format("sliding_window ({}) limits causal attention: arch 'encoder' attends to "
                                          "every position, so it must be 0",
                                          m.sliding_window);
               }});
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
                 if (!norm_kind(m.norm_type).grouped || m.d_model % m.norm_groups == 0) return std::string();
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
  c.push_back({"optim", {"optim.layer_lr_scale", "model.n_layers"}, [](const RunConfig& r) {
                 return parse_error([&] { parse_layer_lr_scale(r.optim.layer_lr_scale, r.model.n_layers); });
               }});
  c.push_back({"schedule", {"schedule.warmup_groups"}, [](const RunConfig& r) {
                 return parse_error([&] { parse_warmup_groups(r.schedule.warmup_groups); });
               }});
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

const std::vector<CrossCheck>& cross_checks() {
  static const std::vector<CrossCheck> checks = build_cross_checks();
  return checks;
}

}  // namespace normlab::config_detail
