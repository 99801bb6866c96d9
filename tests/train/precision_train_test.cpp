// train.precision on tiny configs: bf16/fp16 forward on 16-bit copies with float32 master weights,
// float16 loss scaling (skips, halving, growth), its state across a resume, and the config checks.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "autograd/autocast.h"
#include "autograd/ops.h"
#include "core/backend.h"
#include "core/cpu/blas_core.h"
#include "core/cpu/f32_gemm.h"
#include "core/cpu/half_gemm.h"
#include "command_util.h"
#include "core/random.h"
#include "config/config.h"
#include "io/csv.h"
#include "train/run_dir.h"
#include "train/trainer.h"
#include "nn/transformer.h"
#include "test_util.h"
#include "trainer_test_util.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;
using test::TinyRun;
using test::metrics_without_timing;
using test::quiet_options;
using test::read_summary;

ModelConfig small_model(NormType norm) {
  ModelConfig m;
  m.vocab_size = 11;
  m.d_model = 32;
  m.n_heads = 4;
  m.n_layers = 2;
  m.d_ff = 64;
  m.context_length = 8;
  m.norm_type = norm;
  return m;
}

Tensor random_ids(Generator& gen, int64_t b, int64_t t, int64_t vocab) {
  std::vector<int32_t> ids;
  for (int64_t i = 0; i < b * t; ++i) ids.push_back(static_cast<int32_t>(gen.uniform() * static_cast<double>(vocab)));
  return Tensor::from_ints(ids, {b, t});
}

double cosine(const Tensor& a, const Tensor& b) {
  const auto x = a.to_vector(), y = b.to_vector();
  double xy = 0, xx = 0, yy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    xy += x[i] * y[i];
    xx += x[i] * x[i];
    yy += y[i] * y[i];
  }
  return xy / std::sqrt(xx * yy);
}

// Under autocast the model computes in 16 bits (its logits come out 16-bit, the loss differs from
// float32's in the low digits), while every gradient arrives in float32 on the master weights and
// points the same way as float32's.
TEST(MixedPrecision, AutocastRunsTheModelIn16BitsWithFloat32Gradients) {
  for (const NormType norm : {NormType::LayerNorm, NormType::RmsNorm, NormType::RmsNormUnitOffset}) {
    for (const DType half : {DType::BF16, DType::F16}) {
      TransformerLM model(small_model(norm));
      Generator gen(3);
      const Tensor ids = random_ids(gen, 2, 8, 11), targets = random_ids(gen, 2, 8, 11);
      const Var reference = model.loss(ids, targets);
      backward(reference);
      std::vector<Tensor> reference_grads;
      for (auto& [name, p] : model.named_parameters()) reference_grads.push_back(p.grad().clone());
      model.zero_grad();
      Var loss;
      {
        AutocastGuard autocast(half);
        EXPECT_EQ(model.forward(ids).value().dtype(), half);
        loss = model.loss(ids, targets);
      }
      EXPECT_EQ(loss.value().dtype(), DType::F32);
      EXPECT_NEAR(loss.item(), reference.item(), 0.02) << dtype_name(half);
      EXPECT_NE(loss.item(), reference.item()) << "the 16-bit forward must round somewhere";
      backward(loss);
      double largest = 0;
      for (const Tensor& g : reference_grads) largest = std::max(largest, std::sqrt(backend_for(g.device()).sum_squares(g)));
      size_t i = 0;
      for (auto& [name, p] : model.named_parameters()) {
        ASSERT_TRUE(p.grad().defined()) << name;
        EXPECT_EQ(p.grad().dtype(), DType::F32) << name;
        const Tensor& ref = reference_grads[i++];
        // gradients that are zero analytically (attention's key bias) hold only rounding noise
        if (std::sqrt(backend_for(ref.device()).sum_squares(ref)) < 1e-4 * largest) continue;
        EXPECT_GT(cosine(p.grad(), ref), 0.99) << name << " " << dtype_name(half);
      }
    }
  }
}

TEST(MixedPrecision, WithoutAGuardNothingChanges) {
  TransformerLM model(small_model(NormType::LayerNorm));
  Generator gen(5);
  const Tensor ids = random_ids(gen, 2, 8, 11), targets = random_ids(gen, 2, 8, 11);
  const double plain = model.loss(ids, targets).item();
  double under_f32_guard = 0;
  {
    AutocastGuard off(DType::F32);
    under_f32_guard = model.loss(ids, targets).item();
  }
  EXPECT_EQ(plain, under_f32_guard);  // bitwise
  EXPECT_THROW(AutocastGuard(DType::F64), Error);
}

TEST(MixedPrecision, Bf16RunTrainsAndRecordsItsPrecision) {
  TinyRun t;
  const TrainResult fp32 = train(t.config({"train.name=fp32", "train.steps=30"}), quiet_options());
  const TrainResult bf16 = train(t.config({"train.name=bf16", "train.steps=30", "train.precision=bf16"}), quiet_options());
  EXPECT_EQ(bf16.status, RunStatus::Completed);
  EXPECT_EQ(read_summary(t.run("bf16"))["precision"], "bf16");
  // The kernels that computed each run: float32's choice in both, the half GEMM's only in bf16.
  const auto kernels = read_summary(t.run("bf16"))["cpu_kernels"];
  EXPECT_EQ(kernels["fp32_gemm"], f32_gemm_description());
  EXPECT_EQ(kernels["half_gemm"], half_gemm_description(DType::BF16));
  EXPECT_FALSE(read_summary(t.run("fp32"))["cpu_kernels"].contains("half_gemm"));
  EXPECT_EQ(read_summary(t.run("fp32"))["cpu_kernels"]["blas"], blas_core_description());
  EXPECT_FALSE(read_summary(t.run("bf16")).contains("loss_scale"));
  const auto rows = metrics_without_timing(t.run("bf16"));
  EXPECT_FALSE(rows.front().contains("loss_scale"));
  EXPECT_LT(rows.back()["train_loss"].get<double>(), rows.front()["train_loss"].get<double>() - 0.2);
  EXPECT_NEAR(bf16.final_val_loss, fp32.final_val_loss, 0.1);
  EXPECT_NE(bf16.final_val_loss, fp32.final_val_loss);
  // gradient-norm logging works in bf16: every column of every logged step finite, the global norm
  // within 10% of fp32's at initialization (the same weights, the forward rounded)
  const CsvTable g16 = read_csv(t.run("bf16") / "grad_norms.csv"), g32 = read_csv(t.run("fp32") / "grad_norms.csv");
  ASSERT_EQ(g16.rows.size(), g32.rows.size());
  ASSERT_EQ(g16.columns, g32.columns);
  for (const auto& row : g16.rows)
    for (double v : row) EXPECT_TRUE(std::isfinite(v));
  const int global = g16.column("global");
  ASSERT_GE(global, 0);
  EXPECT_NEAR(g16.rows[0][global], g32.rows[0][global], 0.1 * g32.rows[0][global]);
  EXPECT_GT(g16.rows[0][g16.column("residual_rms.0")], 0.0);
}

// A loss scale of 2^30 overflows float16 at once: steps are skipped and the scale halves until the
// gradients fit, then training proceeds and the scale doubles after each growth interval.
TEST(MixedPrecision, Fp16LossScaleSkipsOverflowingStepsAndRecoversTheScale) {
  TinyRun t;
  const TrainResult r = train(t.config({"train.name=fp16", "train.steps=60", "train.precision=fp16",
                                        "train.loss_scale_init=1073741824",
                                        "train.loss_scale_growth_interval=5"}),
                              quiet_options());
  EXPECT_EQ(r.status, RunStatus::Completed);
  const auto rows = metrics_without_timing(t.run("fp16"));
  ASSERT_FALSE(rows.empty());
  int64_t skipped = 0, grown = 0, clean_in_a_row = 0;
  double previous_scale = 1073741824;
  for (const auto& row : rows) {
    ASSERT_TRUE(row.contains("loss_scale")) << row.dump();
    const double scale = row["loss_scale"].get<double>();
    if (row.value("skipped", false)) {
      ++skipped;
      clean_in_a_row = 0;
      EXPECT_EQ(scale, previous_scale / 2) << row.dump();
    } else if (++clean_in_a_row == 5) {  // the growth interval: the scale doubles, the count restarts
      ++grown;
      clean_in_a_row = 0;
      EXPECT_EQ(scale, previous_scale * 2) << row.dump();
    } else {
      EXPECT_EQ(scale, previous_scale) << row.dump();
    }
    EXPECT_EQ(row["skipped_steps"].get<int64_t>(), skipped) << row.dump();
    previous_scale = scale;
  }
  EXPECT_GT(skipped, 5);
  EXPECT_GE(grown, 1);
  const nlohmann::json summary = read_summary(t.run("fp16"));
  EXPECT_EQ(summary["skipped_steps"].get<int64_t>(), skipped);
  EXPECT_EQ(summary["precision"], "fp16");
  EXPECT_LT(rows.back()["train_loss"].get<double>(), rows.front()["train_loss"].get<double>());
}

TEST(MixedPrecision, Fp16ResumeContinuesWithTheSavedLossScale) {
  TinyRun t;
  const std::vector<std::string> common = {"train.precision=fp16", "train.steps=24",
                                           "train.loss_scale_init=1073741824",
                                           "train.loss_scale_growth_interval=3"};
  auto with = [&](std::string name) {
    auto o = common;
    o.push_back("train.name=" + name);
    return t.config(o);
  };
  train(with("full"), quiet_options());
  train(with("part"), quiet_options(14));
  const TrainResult resumed = train(RunConfig{}, quiet_options(-1, t.run("part").string()));
  EXPECT_EQ(resumed.status, RunStatus::Completed);
  EXPECT_EQ(metrics_without_timing(t.run("part")), metrics_without_timing(t.run("full")));
  EXPECT_EQ(read_summary(t.run("part"))["loss_scale"], read_summary(t.run("full"))["loss_scale"]);
}

TEST(MixedPrecision, ConfigChecksNameTheKeys) {
  TinyRun t;
  const std::string f64 = test::error_of([&] { t.config({"train.precision=bf16", "model.dtype=float64"}); });
  EXPECT_NE(f64.find("[train] precision 'bf16'"), std::string::npos) << f64;
  EXPECT_NE(f64.find("float32 master weights"), std::string::npos) << f64;
  const std::string bad = test::error_of([&] { t.config({"train.precision=fp8"}); });
  EXPECT_NE(bad.find("fp32, bf16, fp16"), std::string::npos) << bad;
  const std::string scale = test::error_of([&] { t.config({"train.loss_scale_init=0"}); });
  EXPECT_NE(scale.find("train.loss_scale_init"), std::string::npos) << scale;
}

}  // namespace
}  // namespace normlab
