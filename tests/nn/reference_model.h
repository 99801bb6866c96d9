// TransformerLM's forward written out from the formulas in nn/transformer.h, nn/block.h,
// nn/attention.h, nn/ffn.h and nn/norms.h, in long double on plain vectors, reading the model's
// parameters by their documented names. It shares no code with nn/ or the kernels (the norms are
// the textbook formulas of tests/autograd/norm_formula.h), so a wrong mask, scale, residual,
// placement, norm or head in the model shows up as a difference in the logits.
#pragma once
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "../autograd/norm_formula.h"
#include "nn/model_config.h"
#include "nn/module.h"

namespace normlab::reference_model {

using LD = long double;
using Vec = std::vector<LD>;

// (rows, cols) row-major; rows are b * T + t.
struct Matrix {
  int64_t rows = 0, cols = 0;
  Vec v;
  LD& at(int64_t r, int64_t c) { return v[static_cast<size_t>(r * cols + c)]; }
  LD at(int64_t r, int64_t c) const { return v[static_cast<size_t>(r * cols + c)]; }
};

inline Matrix zeros(int64_t rows, int64_t cols) { return {rows, cols, Vec(static_cast<size_t>(rows * cols))}; }

// Every parameter and buffer of a module by dotted name (with `prefix` prepended), in long double.
struct Params {
  std::map<std::string, Vec> values;
  explicit Params(const Module& m, const std::string& prefix = "") {
    for (const auto& [name, p] : m.named_parameters()) add(prefix + name, p.value());
    for (const auto& [name, t] : m.named_buffers()) add(prefix + name, t);
  }
  bool has(const std::string& name) const { return values.count(name) > 0; }
  const Vec& at(const std::string& name) const { return values.at(name); }

 private:
  void add(const std::string& name, const Tensor& t) {
    const std::vector<double> d = t.to_vector();
    values[name] = Vec(d.begin(), d.end());
  }
};

struct Model {
  ModelConfig config;
  Params params;
  bool training;  // BatchNorm: batch statistics (true) or running ones

  const Vec& p(const std::string& name) const { return params.at(name); }
  bool has(const std::string& name) const { return params.has(name); }

  // y = x W^T + b, W "<name>.weight" (out, in), b "<name>.bias" when present.
  Matrix linear(const Matrix& x, const std::string& name) const {
    const Vec& w = p(name + ".weight");
    const int64_t out = static_cast<int64_t>(w.size()) / x.cols;
    Matrix y = zeros(x.rows, out);
    for (int64_t r = 0; r < x.rows; ++r)
      for (int64_t o = 0; o < out; ++o) {
        LD s = has(name + ".bias") ? p(name + ".bias")[o] : 0;
        for (int64_t i = 0; i < x.cols; ++i) s += x.at(r, i) * w[o * x.cols + i];
        y.at(r, o) = s;
      }
    return y;
  }

  Matrix norm(const Matrix& x, const std::string& name) const {
    namespace nf = norm_formula;
    const std::string type = enum_name(config.norm_type);
    if (type == "none") return x;
    nf::Spec spec;
    spec.eps = config.norm_eps;
    spec.groups = config.norm_groups;
    if (type == "layernorm") spec.kind = nf::Kind::Layer;
    else if (type == "rmsnorm") spec.kind = nf::Kind::Rms;
    else if (type == "rmsnorm_unit_offset") spec.kind = nf::Kind::RmsUnitOffset;
    else if (type == "groupnorm") spec.kind = nf::Kind::Group;
    else spec.kind = training ? nf::Kind::BatchTrain : nf::Kind::BatchEval;
    if (spec.kind == nf::Kind::BatchEval) {
      spec.running_mean = p(name + ".running_mean");
      spec.running_var = p(name + ".running_var");
    }
    const Vec none;
    const Vec& beta = has(name + ".bias") ? p(name + ".bias") : none;
    return {x.rows, x.cols, nf::forward(spec, x.v, x.cols, p(name + ".weight"), beta)};
  }

  // Rotary embedding of one head's vector at position t: the pair (d, d + D/2) turns by the angle
  // t * theta^(-2d/D) (Hugging Face's rotate-half layout).
  void rotate(Matrix& m, int64_t row, int64_t offset, int64_t D, int64_t t) const {
    for (int64_t d = 0; d < D / 2; ++d) {
      const LD angle = t * std::pow(static_cast<LD>(config.rope_theta), -2.0L * d / D);
      const LD a = m.at(row, offset + d), b = m.at(row, offset + d + D / 2);
      m.at(row, offset + d) = a * std::cos(angle) - b * std::sin(angle);
      m.at(row, offset + d + D / 2) = b * std::cos(angle) + a * std::sin(angle);
    }
  }

  // Causal attention: position i of a sequence attends to positions j <= i (and j >= i - W with a
  // sliding window W); query head h reads key/value head h / (H / K).
  Matrix attention(const Matrix& x, int64_t T, const std::string& name) const {
    Matrix q = linear(x, name + ".q"), k = linear(x, name + ".k"), v = linear(x, name + ".v");
    const int64_t H = config.n_heads, K = config.n_kv_heads > 0 ? config.n_kv_heads : H;
    const int64_t D = config.head_dim > 0 ? config.head_dim : x.cols / H, B = x.rows / T;
    if (config.position_embedding == PositionEmbedding::Rope)
      for (int64_t r = 0; r < x.rows; ++r) {
        for (int64_t h = 0; h < H; ++h) rotate(q, r, h * D, D, r % T);
        for (int64_t h = 0; h < K; ++h) rotate(k, r, h * D, D, r % T);
      }
    const int64_t W = config.sliding_window;
    Matrix heads = zeros(x.rows, H * D);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < T; ++i) {
          const int64_t g = h / (H / K), first = W > 0 ? std::max<int64_t>(0, i - W) : 0;
          Vec score(static_cast<size_t>(i + 1));
          LD top = -INFINITY, total = 0;
          for (int64_t j = first; j <= i; ++j) {
            LD s = 0;
            for (int64_t d = 0; d < D; ++d) s += q.at(b * T + i, h * D + d) * k.at(b * T + j, g * D + d);
            score[j] = s / std::sqrt(static_cast<LD>(D));
            top = std::max(top, score[j]);
          }
          for (int64_t j = first; j <= i; ++j) total += (score[j] = std::exp(score[j] - top));
          for (int64_t j = first; j <= i; ++j)
            for (int64_t d = 0; d < D; ++d)
              heads.at(b * T + i, h * D + d) += score[j] / total * v.at(b * T + j, g * D + d);
        }
    return linear(heads, name + ".o");
  }

  static LD gelu(LD u) {
    return 0.5L * u * (1 + std::tanh(std::sqrt(2 / M_PIl) * (u + 0.044715L * u * u * u)));
  }

  Matrix feed_forward(const Matrix& x, const std::string& name) const {
    Matrix h = linear(x, name + ".w1");
    const std::string type = enum_name(config.ffn_type);
    const Matrix gate = type == "swiglu" || type == "geglu" ? linear(x, name + ".w3") : Matrix{};
    for (size_t i = 0; i < h.v.size(); ++i) {
      const LD u = h.v[i];
      if (type == "relu") h.v[i] = u > 0 ? u : 0;
      else if (type == "gelu") h.v[i] = gelu(u);
      else if (type == "swiglu") h.v[i] = u / (1 + std::exp(-u)) * gate.v[i];
      else h.v[i] = gelu(u) * gate.v[i];  // geglu
    }
    return linear(h, name + ".w2");
  }

  static Matrix plus(const Matrix& a, const Matrix& b, LD a_scale = 1) {
    Matrix y = a;
    for (size_t i = 0; i < y.v.size(); ++i) y.v[i] = a_scale * a.v[i] + b.v[i];
    return y;
  }

  // Layer l: Mix-LN (Li et al. 2024) is Post-LN in its first floor(L / 4) layers, Pre-LN after.
  Matrix block(const Matrix& x, int64_t T, const std::string& name, int64_t l) const {
    std::string placement = enum_name(config.norm_placement);
    if (placement == "mix_ln") placement = l < config.n_layers / 4 ? "post" : "pre";
    auto attn = [&](const Matrix& m) { return attention(m, T, name + ".attn"); };
    auto ffn = [&](const Matrix& m) { return feed_forward(m, name + ".ffn"); };
    auto norm = [&](const Matrix& m, const char* which) { return this->norm(m, name + "." + which); };
    if (placement == "post") {
      const Matrix h = norm(plus(x, attn(x)), "norm1");
      return norm(plus(h, ffn(h)), "norm2");
    }
    if (placement == "pre") {
      const Matrix h = plus(x, attn(norm(x, "norm1")));
      return plus(h, ffn(norm(h, "norm2")));
    }
    if (placement == "none") {
      const Matrix h = plus(x, attn(x));
      return plus(h, ffn(h));
    }
    if (placement == "sandwich") {
      const Matrix h = plus(x, norm(attn(norm(x, "norm1")), "post_norm1"));
      return plus(h, norm(ffn(norm(h, "norm2")), "post_norm2"));
    }
    if (placement == "b2t") {  // Takase et al. 2022: the block's input x joins the last sum
      const Matrix h = norm(plus(x, attn(x)), "norm1");
      return norm(plus(plus(h, ffn(h)), x), "norm2");
    }
    const LD n = 2.0L * config.n_layers;  // residual sub-layers
    const LD alpha = placement == "admin" ? std::sqrt((n + 1) / std::log(n + 1) - 1) : std::pow(n, 0.25L);  // admin, deepnorm
    const Matrix h = norm(plus(x, attn(x), alpha), "norm1");
    return norm(plus(h, ffn(h), alpha), "norm2");
  }

  // ids (B, T) row-major -> logits (B * T, vocab). Token embeddings times sqrt(C) for
  // embedding_scale "sqrt_d"; the tied head uses the stored (unscaled) embedding.
  Matrix logits(const std::vector<int32_t>& ids, int64_t T) const {
    const int64_t C = config.d_model, V = config.vocab_size, rows = static_cast<int64_t>(ids.size());
    const LD token_scale = config.embedding_scale == EmbeddingScale::SqrtD ? std::sqrt(static_cast<LD>(C)) : 1;
    Matrix x = zeros(rows, C);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < C; ++c)
        x.at(r, c) = token_scale * p("tok_emb.weight")[ids[r] * C + c] +
                     (has("pos_emb.weight") ? p("pos_emb.weight")[(r % T) * C + c] : 0);
    for (int64_t l = 0; l < config.n_layers; ++l) x = block(x, T, "blocks." + std::to_string(l), l);
    const std::string placement = enum_name(config.norm_placement);
    if (placement == "pre" || placement == "sandwich" || placement == "mix_ln") x = norm(x, "final_norm");
    Matrix head{V, C, config.tie_embeddings ? p("tok_emb.weight") : p("lm_head.weight")};
    Matrix y = zeros(rows, V);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t o = 0; o < V; ++o)
        for (int64_t c = 0; c < C; ++c) y.at(r, o) += x.at(r, c) * head.at(o, c);
    return y;
  }
};

}  // namespace normlab::reference_model
