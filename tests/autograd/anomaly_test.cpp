// Anomaly mode (autograd/anomaly.h): the first op whose output (forward) or computed gradient
// (backward) holds inf/NaN is named with its scope, parameters and shapes; off, nothing is checked.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "autograd/anomaly.h"
#include "autograd/ops.h"

namespace normlab {
namespace {

class AnomalyTest : public ::testing::Test {
 protected:
  void SetUp() override { Tape::current().clear(); }
  void TearDown() override { Tape::current().clear(); }
};

// Runs f, which must throw AnomalyError, and returns its record.
template <typename F>
AnomalyRecord anomaly_of(F f) {
  try {
    f();
  } catch (const AnomalyError& e) {
    return e.record;
  }
  ADD_FAILURE() << "no AnomalyError";
  return {};
}

TEST_F(AnomalyTest, ForwardNamesTheFirstOpThatMadeInfWithItsScopeParameterAndShapes) {
  // w has two zeros: log gives -inf there; every op after it carries the inf on.
  Var w = parameter(Tensor::from_vector({1.0, 0.0, 2.0, 3.0, 0.0, 5.0}, {2, 3}, DType::F64), "layer.w");
  const AnomalyModeGuard anomaly;
  const AnomalyRecord r = anomaly_of([&] {
    Var logs;
    {
      const ScopeGuard in_first(intern_scope("first"));
      logs = log(w);
    }
    const ScopeGuard in_second(intern_scope("second"));
    backward(sum_all(scale(logs, 2.0)));
  });
  EXPECT_EQ(r.phase, "forward");
  EXPECT_EQ(r.op, "log");
  EXPECT_EQ(r.scope, "first");
  EXPECT_EQ(r.parameters, std::vector<std::string>{"layer.w"});
  ASSERT_EQ(r.inputs.size(), 1u);
  EXPECT_EQ(r.inputs[0].shape, (Shape{2, 3}));
  EXPECT_EQ(r.inputs[0].dtype, DType::F64);
  EXPECT_TRUE(r.inputs[0].finite);
  EXPECT_EQ(r.output.shape, (Shape{2, 3}));
  EXPECT_FALSE(r.output.finite);
  EXPECT_EQ(r.output.inf_count, 2);
  EXPECT_EQ(r.output.nan_count, 0);
  const std::string m = r.message();
  for (const char* part : {"[anomaly] forward", "'log'", "in first", "layer.w", "float64 (2, 3)", "2 inf"})
    EXPECT_NE(m.find(part), std::string::npos) << part << " not in: " << m;
  EXPECT_EQ(Tape::current().size(), 0u);  // checked before it is recorded
}

TEST_F(AnomalyTest, BackwardNamesAnOpWhoseForwardIsFiniteButGradientIsNot) {
  // sqrt(0) = 0 is finite; d sqrt(x)/dx = 1 / (2 sqrt(x)) is inf at 0.
  Var w = parameter(Tensor::from_vector({0.0, 1.0, 4.0}, {3}, DType::F32), "w");
  const AnomalyModeGuard anomaly;
  Var loss;
  {
    const ScopeGuard in_layer(intern_scope("blocks.0.ffn"));
    ASSERT_NO_THROW(loss = sum_all(sqrt(w)));  // the forward is finite: nothing to report yet
  }
  const AnomalyRecord r = anomaly_of([&] { backward(loss); });
  EXPECT_EQ(r.phase, "backward");
  EXPECT_EQ(r.op, "sqrt");
  EXPECT_EQ(r.scope, "blocks.0.ffn");  // the scope it was recorded in, long gone when backward ran
  EXPECT_EQ(r.gradient_of, 0);
  EXPECT_EQ(r.parameters, std::vector<std::string>{"w"});
  EXPECT_EQ(r.gradient.shape, (Shape{3}));
  EXPECT_EQ(r.gradient.inf_count, 1);
  EXPECT_TRUE(r.output.finite);
  EXPECT_NE(r.message().find("[anomaly] backward: op 'sqrt' in blocks.0.ffn"), std::string::npos) << r.message();
  EXPECT_FALSE(w.grad().defined());  // stopped before the bad gradient reached the parameter
}

TEST_F(AnomalyTest, OffChecksNothingAndTheSameComputationRunsThrough) {
  Var w = parameter(Tensor::from_vector({0.0, 1.0}, {2}, DType::F32), "w");
  const int64_t before = anomaly_checks();
  EXPECT_FALSE(anomaly_mode_enabled());
  Var loss = sum_all(log(add_scalar(sqrt(w), 0.0)));  // -inf forward, inf/NaN backward
  EXPECT_NO_THROW(backward(loss));
  EXPECT_EQ(anomaly_checks(), before);
  EXPECT_FALSE(std::isfinite(loss.item()));
  // On, the same forward checks each op's output as it is made: sqrt and add_scalar pass, log is caught.
  const AnomalyModeGuard anomaly;
  EXPECT_THROW(log(add_scalar(sqrt(w), 0.0)), AnomalyError);
  EXPECT_EQ(anomaly_checks(), before + 3);
}

TEST_F(AnomalyTest, GuardsNestAndRestore) {
  EXPECT_STREQ(current_scope(), "");
  {
    const AnomalyModeGuard on;
    const ScopeGuard outer(intern_scope("blocks.1"));
    {
      const AnomalyModeGuard off(false);
      const ScopeGuard inner(intern_scope("blocks.1.attn"));
      EXPECT_FALSE(anomaly_mode_enabled());
      EXPECT_STREQ(current_scope(), "blocks.1.attn");
    }
    EXPECT_TRUE(anomaly_mode_enabled());
    EXPECT_STREQ(current_scope(), "blocks.1");
  }
  EXPECT_FALSE(anomaly_mode_enabled());
  EXPECT_STREQ(current_scope(), "");
  EXPECT_EQ(intern_scope("blocks.1"), intern_scope(std::string("blocks.") + "1"));  // one copy per name
}

TEST_F(AnomalyTest, GradientArrivingAtAnOutputIsCheckedToo) {
  // y is used twice, each use sends back a finite 3e38; their sum overflows float32. The forward
  // stays finite (x is tiny).
  Var x = parameter(Tensor::from_vector({1e-30}, {1}, DType::F32), "x");
  const AnomalyModeGuard anomaly;
  Var y = scale(x, 1.0);
  Var loss = sum_all(add(scale(y, 3e38), scale(y, 3e38)));
  const AnomalyRecord r = anomaly_of([&] { backward(loss); });
  EXPECT_EQ(r.phase, "backward");
  EXPECT_EQ(r.op, "scale");
  EXPECT_EQ(r.gradient_of, -1);
  EXPECT_EQ(r.gradient.inf_count, 1);
}

}  // namespace
}  // namespace normlab
