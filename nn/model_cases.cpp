#include "nn/model_cases.h"

#include <algorithm>
#include <memory>

#include "core/ops.h"
#include "core/random.h"
#include "nn/placement.h"
#include "nn/transformer.h"

namespace normlab {

ModelConfig tiny_model_config(NormPlacement placement) {
  ModelConfig c;
  c.vocab_size = 11;
  c.d_model = 8;
  c.n_heads = 2;
  c.n_layers = 2;
  c.d_ff = 16;
  c.context_length = 5;
  c.norm_placement = placement;
  c.dtype = ParamDType::Float64;
  c.dropout = 0.0;
  return c;
}

namespace {
// The sources of an encoder_decoder batch: B x S ids, the second one right-padded by two (id 1).
void add_sources(TinyBatch& batch, int64_t B, int64_t S, Generator& gen, const ModelConfig& config) {
  std::vector<int32_t> sources(B * S), padding(B * S, 0);
  for (auto& v : sources) v = static_cast<int32_t>(gen.below(config.vocab_size));
  for (int64_t s = std::max<int64_t>(S - 2, 1); s < S; ++s) {
    padding[S + s] = 1;
    sources[S + s] = 1;
  }
  batch.sources = Tensor::from_ints(sources, {B, S});
  batch.source_padding = Tensor::from_ints(padding, {B, S});
}
}  // namespace

TinyBatch tiny_batch(const ModelConfig& config) {
  const bool seq2seq = config.arch == ModelArch::EncoderDecoder;
  const int64_t B = 2, T = seq2seq && config.context_length >= 2 ? config.context_length - 1 : config.context_length;
  Generator gen(0xba7c4ull);
  std::vector<int32_t> ids(B * T), targets(B * T);
  for (auto& v : ids) v = static_cast<int32_t>(gen.below(config.vocab_size));
  for (auto& v : targets) v = static_cast<int32_t>(gen.below(config.vocab_size));
  // An encoder's masked-LM targets: only some positions count (here every third), the rest are -1.
  if (config.arch == ModelArch::Encoder)
    for (size_t i = 0; i < targets.size(); ++i)
      if (i % 3 != 0) targets[i] = -1;
  TinyBatch batch{Tensor::from_ints(ids, {B, T}), Tensor::from_ints(targets, {B, T}), Tensor(), Tensor()};
  if (seq2seq) add_sources(batch, B, config.context_length, gen, config);
  return batch;
}

OpCase make_model_case(std::string name, std::string description, const ModelConfig& config) {
  NL_CHECK(config.dtype == ParamDType::Float64, "model_cases", "the model must be float64, got {}", config.dtype);
  const TinyBatch batch = tiny_batch(config);
  const Tensor ids_t = batch.ids, targets_t = batch.targets, sources = batch.sources, padding = batch.source_padding;

  auto model = std::make_shared<TransformerLM>(config);
  OpCase c;
  c.name = std::move(name);
  c.description = std::move(description);
  for (const auto& [param_name, param] : model->named_parameters()) {
    c.differentiable.push_back(static_cast<int>(c.input_names.size()));
    c.input_names.push_back(param_name);
  }
  c.make_inputs = [config](uint64_t seed, const Shape&) {
    ModelConfig seeded = config;
    seeded.seed = config.seed + seed;
    TransformerLM fresh(seeded);
    Generator noise(seed ^ 0x0ff5e7ull);
    std::vector<Tensor> inputs;
    for (const Var& p : fresh.parameters()) {
      Tensor v = p.value().clone();
      if (v.dim() == 1) v = ops::add(v, Tensor::randn(v.shape(), noise, 0.0, 0.1, v.dtype()));
      inputs.push_back(v);
    }
    return inputs;
  };
  c.fn = [model, ids_t, targets_t, sources, padding](const std::vector<Var>& params) {
    model->replace_parameters(params);
    return model->training_loss(ids_t, targets_t, sources, padding);
  };
  c.options.step = 1e-5;
  c.options.tolerance = 1e-6;  // measured worst: ~2e-8 (post, pre)
  return c;
}

ModelConfig tiny_rope_config(const std::string& family) {
  ModelConfig c = tiny_model_config(NormPlacement::Pre);
  c.n_heads = 4;
  c.n_kv_heads = 2;  // GQA
  c.context_length = 6;
  c.position_embedding = PositionEmbedding::Rope;
  c.rope_theta = 500.0;
  c.norm_type = NormType::RmsNorm;
  c.ffn_type = FfnType::SwiGlu;
  c.bias = false;
  c.tie_embeddings = false;
  if (family == "mistral") c.sliding_window = 2;
  if (family == "gemma") {
    c.head_dim = 6;  // != d_model / n_heads = 2
    c.norm_type = NormType::RmsNormUnitOffset;
    c.ffn_type = FfnType::GeGlu;
    c.tie_embeddings = true;
    c.embedding_scale = EmbeddingScale::SqrtD;
  }
  return c;
}

void register_model_cases(std::vector<OpCase>& cases) {
  cases.push_back(make_model_case("model_post", "tiny Post-LN TransformerLM, every parameter, loss",
                                  tiny_model_config(NormPlacement::Post)));
  cases.push_back(make_model_case("model_pre", "tiny Pre-LN TransformerLM, every parameter, loss",
                                  tiny_model_config(NormPlacement::Pre)));
  ModelConfig fairseq = tiny_model_config(NormPlacement::Post);
  fairseq.position_embedding = PositionEmbedding::Sinusoidal;
  fairseq.embedding_scale = EmbeddingScale::SqrtD;
  cases.push_back(make_model_case("model_post_sinusoidal",
                                  "tiny Post-LN TransformerLM, fairseq inputs: sqrt(d) tokens + fixed sinusoidal positions",
                                  fairseq));
  cases.push_back(make_model_case("model_llama", "tiny Llama-like LM: RoPE, 4 heads on 2 kv heads, RMSNorm, SwiGLU",
                                  tiny_rope_config("llama")));
  cases.push_back(make_model_case("model_mistral", "tiny Mistral-like LM: as model_llama, sliding window 2, T 6",
                                  tiny_rope_config("mistral")));
  cases.push_back(make_model_case("model_gemma",
                                  "tiny Gemma-like LM: head_dim 6 != 8/4, (1+w) RMSNorm, GeGLU, sqrt(d) scale",
                                  tiny_rope_config("gemma")));
  // The paper's other architectures: a bidirectional encoder (masked-LM targets, every third
  // counted) and fairseq's encoder-decoder (cross-attention, padded sources).
  for (const ModelArch arch : {ModelArch::Encoder, ModelArch::EncoderDecoder})
    for (const NormPlacement placement : {NormPlacement::Post, NormPlacement::Pre}) {
      ModelConfig c = tiny_model_config(placement);
      c.arch = arch;
      if (arch == ModelArch::EncoderDecoder) {
        c.embedding_scale = EmbeddingScale::SqrtD;
        c.position_embedding = PositionEmbedding::Sinusoidal;
      }
      const char* what = arch == ModelArch::Encoder ? "bidirectional encoder, masked-LM targets (every third counted)"
                                                    : "encoder-decoder (fairseq's Transformer): cross-attention, padded sources";
      cases.push_back(make_model_case(fmt::format("model_{}_{}", arch, placement),
                                      fmt::format("tiny {} {}", placement_kind(placement).label, what),
                                      c));
    }
  register_moe_cases(cases);
  register_norm_kind_cases(cases);
}

}  // namespace normlab
