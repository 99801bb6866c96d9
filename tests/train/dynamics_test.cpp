// The dynamics log (train/dynamics.h), each quantity against a hand computation on the tiny
// model: one update is trained, then the test recomputes from the initial and final weights,
// the probe batch and the first training batch what dynamics.csv's row 1 should hold.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "autograd/ops.h"
#include "io/csv.h"
#include "nn/transformer.h"
#include "train/checkpoint.h"
#include "train/dynamics.h"
#include "trainer_test_util.h"

namespace normlab {
namespace {

using test::TinyRun;
using test::quiet_options;
using test::Weights;
using test::weights_of;

// One run of `steps` updates with dynamics.csv on; the config as the trainer resolved it.
RunConfig train_logged(const TinyRun& t, const std::string& name, std::vector<std::string> overrides) {
  overrides.insert(overrides.end(), {"train.name=" + name, "log.dynamics_steps=3"});
  RunConfig c = t.config(overrides);
  c.model.vocab_size = make_dataset(c.data)->vocab_size();
  train(c, quiet_options());
  return c;
}

// Row `step` of a CSV as column -> value.
std::map<std::string, double> row_of(const std::filesystem::path& file, int step) {
  const CsvTable table = read_csv(file);
  for (const auto& row : table.rows)
    if (row[0] == step) {
      std::map<std::string, double> out;
      for (size_t c = 0; c < table.columns.size(); ++c) out[table.columns[c]] = row[c];
      return out;
    }
  ADD_FAILURE() << file << " has no row " << step;
  return {};
}

double rms_of_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(sum / static_cast<double>(a.size()));
}

// Logits of the probe batch (eval mode) under `weights`.
std::vector<double> probe_logits(const RunConfig& c, const Weights& weights) {
  TransformerLM model(c.model);
  for (auto& [name, p] : model.named_parameters())
    p.value().copy_(Tensor::from_vector(weights.at(name), p.shape(), p.dtype()));
  model.eval();
  NoGradGuard no_grad;
  return model.forward(dynamics_probe_batch(c, *make_dataset(c.data)).inputs).value().to_vector();
}

// Block 0's attention on the probe batch at initialization, from the weights alone (pre-LN: the
// logits are those of LayerNorm(tok_emb + pos_emb) projected by q and k): {logit max, entropy}.
std::pair<double, double> attention_by_hand(const RunConfig& c, const Weights& w) {
  const Batch probe = dynamics_probe_batch(c, *make_dataset(c.data));
  const int64_t B = probe.inputs.size(0), T = probe.inputs.size(1), C = c.model.d_model, H = c.model.n_heads;
  const int64_t D = C / H;
  const std::vector<double> ids = probe.inputs.to_vector();
  double logit_max = -INFINITY, entropy = 0;
  for (int64_t b = 0; b < B; ++b) {
    std::vector<std::vector<double>> q(T, std::vector<double>(C)), k(T, std::vector<double>(C));
    for (int64_t t = 0; t < T; ++t) {
      std::vector<double> x(C), h(C);
      double mean = 0, var = 0;
      for (int64_t i = 0; i < C; ++i) {
        x[i] = w.at("tok_emb.weight")[static_cast<size_t>(ids[b * T + t]) * C + i] + w.at("pos_emb.weight")[t * C + i];
        mean += x[i] / C;
      }
      for (int64_t i = 0; i < C; ++i) var += (x[i] - mean) * (x[i] - mean) / C;
      for (int64_t i = 0; i < C; ++i)
        h[i] = (x[i] - mean) / std::sqrt(var + c.model.norm_eps) * w.at("blocks.0.norm1.weight")[i] +
               w.at("blocks.0.norm1.bias")[i];
      for (int64_t o = 0; o < C; ++o) {
        q[t][o] = w.at("blocks.0.attn.q.bias")[o];
        k[t][o] = w.at("blocks.0.attn.k.bias")[o];
        for (int64_t i = 0; i < C; ++i) {
          q[t][o] += w.at("blocks.0.attn.q.weight")[o * C + i] * h[i];
          k[t][o] += w.at("blocks.0.attn.k.weight")[o * C + i] * h[i];
        }
      }
    }
    for (int64_t head = 0; head < H; ++head)
      for (int64_t i = 0; i < T; ++i) {
        std::vector<double> logits;
        for (int64_t j = 0; j <= i; ++j) {  // causal: keys 0..i
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += q[i][head * D + d] * k[j][head * D + d];
          logits.push_back(dot / std::sqrt(static_cast<double>(D)));
          logit_max = std::max(logit_max, logits.back());
        }
        double m = -INFINITY, z = 0;
        for (double l : logits) m = std::max(m, l);
        for (double l : logits) z += std::exp(l - m);
        for (double l : logits) {
          const double p = std::exp(l - m) / z;
          entropy -= p * std::log(p);
        }
      }
  }
  return {logit_max, entropy / static_cast<double>(B * H * T)};
}

TEST(DynamicsLog, EveryQuantityOfTheFirstUpdateMatchesAHandComputation) {
  TinyRun t;  // pre-LN, 2 layers; plain SGD at a constant rate: W_1 = W_0 - lr g
  const RunConfig c = train_logged(t, "sgd", {"optim.name=sgd", "schedule.kind=constant", "train.steps=1"});
  TransformerLM model(c.model);
  const Weights before = weights_of(model);
  load_model_weights(t.run("sgd").string(), model);
  const Weights after = weights_of(model);
  const auto row = row_of(t.run("sgd") / "dynamics.csv", 1);
  const auto norms = row_of(t.run("sgd") / "grad_norms.csv", 1);

  // The probe batch's logits before and after the update.
  const std::vector<double> z0 = probe_logits(c, before), z1 = probe_logits(c, after);
  double z_max = 0;
  for (const double z : z0) z_max = std::max(z_max, std::abs(z));
  EXPECT_NEAR(row.at("logit_max"), z_max, 1e-5);
  EXPECT_NEAR(row.at("output_change"), rms_of_difference(z1, z0), 1e-6);
  {
    TransformerLM at_init(c.model);
    at_init.eval();
    NoGradGuard no_grad;
    const Batch probe = dynamics_probe_batch(c, *make_dataset(c.data));
    EXPECT_NEAR(row.at("probe_loss"), at_init.loss(probe.inputs, probe.targets).item(), 1e-6);
  }
  EXPECT_GT(row.at("output_change"), 0.0);

  for (int block = 0; block < 2; ++block) {
    const std::string b = "blocks." + std::to_string(block) + ".";
    // Gradients: the same update's norms in grad_norms.csv, grouped by hand.
    double attn = 0;
    for (const char* p : {"q", "k", "v", "o"})
      for (const char* kind : {".weight", ".bias"}) attn += std::pow(norms.at(b + "attn." + p + kind), 2);
    EXPECT_NEAR(row.at(b + "grad.attn"), std::sqrt(attn), 1e-6 * std::sqrt(attn));
    double ffn = 0;
    for (const char* p : {"w1", "w2"})
      for (const char* kind : {".weight", ".bias"}) ffn += std::pow(norms.at(b + "ffn." + p + kind), 2);
    EXPECT_NEAR(row.at(b + "grad.ffn"), std::sqrt(ffn), 1e-6 * std::sqrt(ffn));
    EXPECT_NEAR(row.at(b + "grad.w2"), norms.at(b + "ffn.w2.weight"), 1e-6 * norms.at(b + "ffn.w2.weight"));
    EXPECT_NEAR(row.at(b + "grad.w1"), norms.at(b + "ffn.w1.weight"), 1e-6 * norms.at(b + "ffn.w1.weight"));
    // ||W_1 - W_0|| / ||W_0|| over the block's parameters.
    double change = 0, size = 0;
    for (const auto& [name, w0] : before) {
      if (name.rfind(b, 0) != 0) continue;
      for (size_t i = 0; i < w0.size(); ++i) {
        change += std::pow(after.at(name)[i] - w0[i], 2);
        size += w0[i] * w0[i];
      }
    }
    EXPECT_NEAR(row.at(b + "update_ratio"), std::sqrt(change / size), 1e-6 * std::sqrt(change / size));
    EXPECT_FALSE(row.count(b + "adam.sqrt_v_mean")) << "SGD has no second moment";
  }
  // Pre-LN: each block's first norm reads the residual stream entering the block.
  TransformerLM initial(c.model);
  initial.eval();
  initial.set_record_residual_rms(true);
  {
    NoGradGuard no_grad;
    initial.forward(dynamics_probe_batch(c, *make_dataset(c.data)).inputs);
  }
  EXPECT_NEAR(row.at("blocks.0.norm1.input_rms"), initial.residual_rms()[0], 1e-6);
  EXPECT_NEAR(row.at("blocks.1.norm1.input_rms"), initial.residual_rms()[1], 1e-6);
  EXPECT_NEAR(row.at("final_norm.input_rms"), initial.residual_rms()[2], 1e-6);
  const auto [logit_max, entropy] = attention_by_hand(c, before);
  EXPECT_NEAR(row.at("blocks.0.attn.logit_max"), logit_max, 1e-5);
  EXPECT_NEAR(row.at("blocks.0.attn.entropy"), entropy, 1e-5);
}

// Adam's first update: v = (1 - beta2) g^2, so sqrt(v_hat) = |g| element by element.
TEST(DynamicsLog, AdamsSecondMomentAfterTheFirstUpdateIsTheGradientMagnitude) {
  TinyRun t;
  const RunConfig c = train_logged(t, "adam", {"optim.name=adam", "train.steps=1"});
  const auto row = row_of(t.run("adam") / "dynamics.csv", 1);
  TransformerLM model(c.model);
  Generator gen(c.train.seed);  // the trainer's first batch
  const Batch batch = make_dataset(c.data)->sample(false, c.train.batch_size, c.train.context, gen);
  backward(model.training_loss(batch.inputs, batch.targets));
  for (int block = 0; block < 2; ++block) {
    const std::string b = "blocks." + std::to_string(block) + ".";
    double sum = 0, max = 0, count = 0;
    for (const auto& [name, p] : model.named_parameters()) {
      if (name.rfind(b, 0) != 0) continue;
      for (const double g : p.grad().to_vector()) {
        sum += std::abs(g);
        max = std::max(max, std::abs(g));
        ++count;
      }
    }
    // v is float32: (1 - beta2) g^2 rounds at ~1e-5 relative (1 - beta2 loses 3 digits)
    EXPECT_NEAR(row.at(b + "adam.sqrt_v_mean"), sum / count, 1e-4 * sum / count);
    EXPECT_NEAR(row.at(b + "adam.sqrt_v_max"), max, 1e-4 * max);
  }
}

// An encoder-decoder's blocks are encoder.N and decoder.N: each has its gradient, Adam, update
// and activation columns, a decoder block also its cross-attention's gradient, and each block's
// gradient columns split that block's own part of grad_norms.csv (logged every step).
TEST(DynamicsLog, AnEncoderDecoderHasColumnsForEveryBlockOfBothStacks) {
  TinyRun t;
  train_logged(t, "s2s", {"model.arch=encoder_decoder", "data.source=seq2seq_translate",
                          "data.seq2seq_min_length=2", "optim.name=adam", "train.steps=2", "log.grad_norm_every=1"});
  const auto row = row_of(t.run("s2s") / "dynamics.csv", 2);
  const auto norms = row_of(t.run("s2s") / "grad_norms.csv", 2);
  for (const std::string stack : {"encoder", "decoder"})
    for (int block = 0; block < 2; ++block) {
      const std::string b = stack + "." + std::to_string(block) + ".";
      SCOPED_TRACE(b);
      for (const char* column : {"grad.attn", "grad.ffn", "grad.w1", "grad.w2", "adam.sqrt_v_mean", "update_ratio"})
        EXPECT_GT(row.at(b + column), 0.0) << column;
      EXPECT_EQ(row.count(b + "grad.cross_attn"), stack == "decoder" ? 1u : 0u);
      // the block's gradient norm from grad_norms.csv's per-parameter norms, split by part
      double attn = 0, cross = 0, ffn = 0, norm_gains = 0;
      for (const auto& [name, value] : norms) {
        if (name.rfind(b, 0) != 0) continue;
        const std::string local = name.substr(b.size());
        (local.rfind("attn.", 0) == 0 ? attn : local.rfind("cross_attn.", 0) == 0 ? cross
                                             : local.rfind("ffn.", 0) == 0    ? ffn
                                                                              : norm_gains) += value * value;
      }
      EXPECT_NEAR(row.at(b + "grad.attn"), std::sqrt(attn), 1e-6 * std::sqrt(attn));
      EXPECT_NEAR(row.at(b + "grad.ffn"), std::sqrt(ffn), 1e-6 * std::sqrt(ffn));
      if (stack == "decoder") {
        EXPECT_NEAR(row.at(b + "grad.cross_attn"), std::sqrt(cross), 1e-6 * std::sqrt(cross));
      }
      EXPECT_GT(norm_gains, 0.0);
    }
  for (const auto& [column, value] : row) EXPECT_NE(column.rfind("blocks.", 0), 0u) << column;
}

// Rows 1..N only, and a run stopped and resumed writes the rows an uninterrupted run writes.
TEST(DynamicsLog, CoversTheFirstNUpdatesAndResumesToTheSameRows) {
  TinyRun t;
  train_logged(t, "whole", {});
  RunConfig c = t.config({"train.name=cut", "log.dynamics_steps=3"});
  c.model.vocab_size = make_dataset(c.data)->vocab_size();
  train(c, quiet_options(/*stop_after=*/2));
  train(c, quiet_options(-1, t.run("cut").string()));
  const CsvTable whole = read_csv(t.run("whole") / "dynamics.csv"), cut = read_csv(t.run("cut") / "dynamics.csv");
  ASSERT_EQ(whole.rows.size(), 3u);
  EXPECT_EQ(whole.columns, cut.columns);
  ASSERT_EQ(cut.rows.size(), 3u);
  for (size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(whole.rows[r][0], static_cast<double>(r + 1));
    for (size_t col = 1; col < whole.columns.size(); ++col)
      EXPECT_NEAR(cut.rows[r][col], whole.rows[r][col], 1e-9 * (1 + std::abs(whole.rows[r][col])))
          << whole.columns[col] << " at step " << r + 1;
  }
}

}  // namespace
}  // namespace normlab
