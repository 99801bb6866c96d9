// The MoE FFN beyond one layer: the load-balancing loss against Hugging Face's (the mixtral fixture
// in tests/data/hf-fixtures/, made by transformers 4.40.2), and a tiny MoE model that trains.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "command_util.h"
#include "config/config.h"
#include "train/run_dir.h"
#include "io/safetensors.h"
#include "train/trainer.h"
#include "nn/moe.h"
#include "nn/transformer.h"
#include "test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& file) {
  return std::string(NORMLAB_SOURCE_DIR) + "/tests/data/hf-fixtures/mixtral/" + file;
}

// HF's load_balancing_loss_func in plain float64 loops, from router logits (L, M, E), top k:
// all layers' rows pooled; f_e = #(row, slot) choosing e / rows, P_e = mean p_e; E sum f_e P_e.
double reference_aux_loss(const std::vector<double>& logits, int64_t rows, int64_t experts, int64_t k) {
  std::vector<double> f(experts, 0.0), mean_p(experts, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const double* l = logits.data() + r * experts;
    const double top = *std::max_element(l, l + experts);
    std::vector<double> p(experts);
    double z = 0.0;
    for (int64_t e = 0; e < experts; ++e) z += p[e] = std::exp(l[e] - top);
    std::vector<int64_t> order(experts);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return p[a] > p[b]; });
    for (int64_t j = 0; j < k; ++j) f[order[j]] += 1.0 / static_cast<double>(rows);
    for (int64_t e = 0; e < experts; ++e) mean_p[e] += p[e] / z / static_cast<double>(rows);
  }
  double s = 0.0;
  for (int64_t e = 0; e < experts; ++e) s += f[e] * mean_p[e];
  return static_cast<double>(experts) * s;
}

// Each layer's routing of the fixture's router logits (L, M, E) in `dtype`.
std::vector<Routing> fixture_routings(const Tensor& logits, DType dtype) {
  std::vector<Routing> out;
  const int64_t layers = logits.size(0), rows = logits.size(1), experts = logits.size(2);
  const std::vector<double> all = logits.to_vector();
  for (int64_t l = 0; l < layers; ++l) {
    const std::vector<double> one(all.begin() + l * rows * experts, all.begin() + (l + 1) * rows * experts);
    out.push_back(route_top_k(constant(Tensor::from_vector(one, {rows, experts}, dtype)), 2));
  }
  return out;
}

TEST(MoeFixture, LoadBalancingLossMatchesHuggingFace) {
  // float64: expected_f64 was computed by HF with its float32 upcasts made float64 upcasts.
  const SafetensorsFile f64 = load_safetensors(fixture("expected_f64.safetensors"));
  const Tensor& logits = f64.get("router_logits");
  ASSERT_EQ(logits.shape(), (Shape{2, 48, 4}));
  const double hf = f64.get("aux_loss").item();
  EXPECT_NEAR(reference_aux_loss(logits.to_vector(), 2 * 48, 4, 2), hf, 1e-10 * hf);
  const std::vector<Routing> routings = fixture_routings(logits, DType::F64);
  EXPECT_NEAR(load_balancing_loss(routings).item(), hf, 1e-10 * hf);
  // The fixture's NOTES: tokens routed to each expert, per layer.
  EXPECT_EQ(expert_counts(routings[0]), (std::vector<int64_t>{22, 3, 41, 30}));
  EXPECT_EQ(expert_counts(routings[1]), (std::vector<int64_t>{27, 13, 33, 23}));
  // float32, as HF computes it for a float32 model.
  const SafetensorsFile f32 = load_safetensors(fixture("expected.safetensors"));
  const double hf32 = f32.get("aux_loss").item();
  EXPECT_NEAR(load_balancing_loss(fixture_routings(f32.get("router_logits"), DType::F32)).item(), hf32,
              1e-5 * hf32);
}

struct TinyMoeRun {
  test::ScratchDir dir;
  std::string config_path = dir.write("tiny.toml", test::tiny_config_toml(dir.file("runs")));
  RunConfig config(std::vector<std::string> overrides) const {
    for (const char* moe : {"model.ffn_type=moe", "model.n_experts=4", "model.experts_top_k=2",
                            "model.norm_type=rmsnorm", "model.bias=false"})
      overrides.push_back(moe);
    return load_config(config_path, overrides);
  }
  fs::path run(const std::string& name) const { return dir.path() / "runs" / name; }
};

double mean_train_loss(const std::vector<nlohmann::json>& rows, size_t from, size_t to) {
  double s = 0.0;
  for (size_t i = from; i < to; ++i) s += rows[i]["train_loss"].get<double>();
  return s / static_cast<double>(to - from);
}

TEST(MoeTraining, ATinyMoeModelLowersItsLossAndLogsItsRouting) {
  TinyMoeRun t;
  TrainOptions quiet;
  quiet.quiet = true;
  const TrainResult r =
      train(t.config({"train.name=moe", "train.steps=40", "model.router_aux_loss_coef=0.01", "log.eval_every=40"}), quiet);
  ASSERT_EQ(r.status, RunStatus::Completed);
  const std::vector<nlohmann::json> rows = read_metrics(t.run("moe") / "metrics.jsonl");
  ASSERT_EQ(rows.size(), 40u);
  // The copy task's 8 symbols: chance is log 8 = 2.08 nats. Measured: 2.42 -> 1.77.
  const double first = mean_train_loss(rows, 0, 5), last = mean_train_loss(rows, 35, 40);
  EXPECT_LT(last, 0.85 * first) << "first five steps " << first << ", last five " << last;
  EXPECT_LT(last, std::log(8.0) - 0.15);
  for (const auto& row : rows) {
    ASSERT_TRUE(row.contains("router_aux_loss"));
    // E sum f_e P_e lies in (0, E k]: k when balanced, larger when skewed.
    EXPECT_GT(row["router_aux_loss"].get<double>(), 0.0);
    EXPECT_LE(row["router_aux_loss"].get<double>(), 8.0);
  }
  // Every expert's matrices and each router have a column of their own in grad_norms.csv.
  const CsvTable table = read_csv(t.run("moe") / "grad_norms.csv");
  for (const char* name : {"blocks.0.ffn.router.weight", "blocks.1.ffn.experts.3.w1.weight",
                           "blocks.0.ffn.experts.0.w2.weight", "blocks.1.ffn.experts.2.w3.weight"})
    EXPECT_GE(table.column(name), 0) << name;
}

}  // namespace
}  // namespace normlab
