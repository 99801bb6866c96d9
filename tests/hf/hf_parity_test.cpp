// Parity with Hugging Face transformers 4.40.2: each fixture in tests/data/hf-fixtures/ (a tiny
// random model made by HF's own code, with HF's logits, loss and every gradient; see its README)
// is loaded through normlab's reader, run forward and backward, and compared per tensor:
// rel = max |normlab - hf| / max |hf|. float32 against expected.safetensors (logits and loss 1e-5,
// gradients 1e-4), float64 against expected_f64.safetensors (1e-10 everywhere). MoE fixtures
// (mixtral) also compare each layer's router probabilities (the softmax of HF's router_logits) and
// HF's unscaled load-balancing loss (aux_loss), with the logits' tolerance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "autograd/tape.h"
#include "hf/hf_checkpoint.h"
#include "io/safetensors.h"
#include "nn/moe.h"
#include "hf_test_util.h"

namespace normlab {
namespace {

struct Tolerances {
  double output, grad;
};

// max |a - b| / max |b| (b the reference); 0 when both are all zeros.
double relative_error(const Tensor& actual, const Tensor& expected) {
  const std::vector<double> a = actual.to_vector(), b = expected.to_vector();
  EXPECT_EQ(a.size(), b.size());
  double diff = 0, scale = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

// Every layer's router probabilities against the row-wise softmax of HF's router_logits (layers, N, E).
double router_probs_error(const TransformerLM& model, const Tensor& hf_router_logits) {
  const std::vector<Routing> routings = model.routings();
  EXPECT_EQ(static_cast<int64_t>(routings.size()), hf_router_logits.size(0));
  const std::vector<double> logits = hf_router_logits.to_vector();
  const size_t e = static_cast<size_t>(hf_router_logits.size(2));
  std::vector<double> hf_probs(logits.size()), probs;
  for (size_t row = 0; row < logits.size() / e; ++row) {
    const auto begin = logits.begin() + static_cast<std::ptrdiff_t>(row * e);
    const double top = *std::max_element(begin, begin + static_cast<std::ptrdiff_t>(e));
    double sum = 0;
    for (size_t i = 0; i < e; ++i) sum += hf_probs[row * e + i] = std::exp(logits[row * e + i] - top);
    for (size_t i = 0; i < e; ++i) hf_probs[row * e + i] /= sum;
  }
  for (const Routing& r : routings) {
    const std::vector<double> p = r.probs.value().to_vector();
    probs.insert(probs.end(), p.begin(), p.end());
  }
  const Shape shape{static_cast<int64_t>(probs.size())};
  if (probs.size() != hf_probs.size()) return INFINITY;
  return relative_error(Tensor::from_vector(probs, shape, DType::F64), Tensor::from_vector(hf_probs, shape, DType::F64));
}

struct Measured {
  double logits = 0, loss = 0, grad = 0;
  double router = 0, aux = 0;  // MoE fixtures only
  std::string worst_grad;
};

Measured run_parity(const std::string& family, ParamDType dtype, const std::string& expected_file) {
  const std::string dir = testing::hf_fixture_dir(family);
  const HfCheckpoint checkpoint = read_hf_checkpoint(dir, dtype);
  TransformerLM model(checkpoint.config);
  load_hf_weights(model, checkpoint);
  model.eval();
  const testing::HfInputs in = testing::read_hf_inputs(dir);
  const SafetensorsFile expected = load_safetensors(dir + "/" + expected_file);

  Measured m;
  {
    NoGradGuard no_grad;
    m.logits = relative_error(model.forward(in.ids).value(), expected.get("logits"));
  }
  const Var loss = model.training_loss(in.ids, in.targets);  // HF's loss: with the aux term iff its config adds it
  m.loss = relative_error(loss.value(), expected.get("loss"));
  if (expected.contains("router_logits")) {
    m.router = router_probs_error(model, expected.get("router_logits"));
    m.aux = relative_error(model.router_aux_loss().value(), expected.get("aux_loss"));
  }
  model.zero_grad();
  backward(loss);
  NamedTensors grads;
  for (const auto& [name, p] : model.named_parameters()) grads.emplace_back(name, p.grad());
  const NamedTensors hf_grads = to_hf_tensors(checkpoint.model_type, checkpoint.config, grads);
  size_t expected_grads = 0;
  for (const std::string& name : expected.names) expected_grads += name.starts_with("grad.");
  EXPECT_EQ(hf_grads.size(), expected_grads) << "every HF parameter gradient is compared";
  for (const auto& [name, g] : hf_grads) {
    const double rel = relative_error(g, expected.get("grad." + name));
    if (rel >= m.grad) {
      m.grad = rel;
      m.worst_grad = name;
    }
  }
  std::cout << fmt::format("[parity] {} {}: logits {:.3g}, loss {:.3g}, worst gradient {:.3g} ({})", family,
                           dtype, m.logits, m.loss, m.grad, m.worst_grad)
            << (expected.contains("router_logits")
                    ? fmt::format(", router probabilities {:.3g}, aux loss {:.3g}", m.router, m.aux)
                    : "")
            << "\n";
  return m;
}

void expect_parity(const std::string& family) {
  for (const auto& [dtype, file, tol] :
       {std::tuple<ParamDType, std::string, Tolerances>{ParamDType::Float32, "expected.safetensors", {1e-5, 1e-4}},
        std::tuple<ParamDType, std::string, Tolerances>{ParamDType::Float64, "expected_f64.safetensors", {1e-10, 1e-10}}}) {
    SCOPED_TRACE(family + " " + enum_name(dtype));
    const Measured m = run_parity(family, dtype, file);
    EXPECT_LE(m.logits, tol.output);
    EXPECT_LE(m.loss, tol.output);
    EXPECT_LE(m.grad, tol.grad) << "worst: grad." << m.worst_grad;
    EXPECT_LE(m.router, tol.output);
    EXPECT_LE(m.aux, tol.output);
  }
}

TEST(HfParity, Gpt1) { expect_parity("gpt1"); }
TEST(HfParity, Gpt2) { expect_parity("gpt2"); }
TEST(HfParity, Llama) { expect_parity("llama"); }
TEST(HfParity, Mistral) { expect_parity("mistral"); }
TEST(HfParity, Gemma) { expect_parity("gemma"); }
TEST(HfParity, Mixtral) { expect_parity("mixtral"); }

}  // namespace
}  // namespace normlab
