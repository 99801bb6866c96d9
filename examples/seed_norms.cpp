// LayerNorm and RMSNorm of x = (1, 2, 3, 6), the seed article's worked example, computed with the
// installed normlab and checked against the article's numbers; then both norms' backward passes
// are checked against central finite differences (float64) with normlab's gradcheck.
// Exit 0 when everything agrees, 1 otherwise.
#include <cmath>
#include <cstdio>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "core/backend.h"

using namespace normlab;

namespace {

// The article rounds to 4 decimals and neglects eps (1e-5 / 1e-6 here move no digit it prints).
constexpr double kTolerance = 1e-4;

bool matches(const char* what, const Var& y, const std::vector<double>& expected) {
  const std::vector<double> got = y.value().to_vector();
  bool ok = got.size() == expected.size();
  std::printf("%-9s", what);
  for (size_t i = 0; i < got.size(); ++i) {
    std::printf(" %8.4f", got[i]);
    ok = ok && i < expected.size() && std::fabs(got[i] - expected[i]) <= kTolerance;
  }
  std::printf("   %s\n", ok ? "matches the seed" : "DIFFERS from the seed");
  return ok;
}

bool gradchecks(const char* what, const GradFn& fn, const std::vector<Tensor>& inputs,
                const std::vector<std::string>& names) {
  std::vector<int> all(inputs.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  bool ok = true;
  for (const InputCheck& check : gradcheck(fn, inputs, names, all, GradcheckOptions{})) {
    std::printf("gradcheck %-14s %-6s max relative error %.2e  %s\n", what, check.input.c_str(),
                check.max_rel_error, check.passed ? "PASS" : "FAIL");
    ok = ok && check.passed;
  }
  return ok;
}

}  // namespace

int main() {
  const Tensor x = Tensor::from_vector({1, 2, 3, 6}, {1, 4}, DType::F64);  // (B=1, C=4)
  const Var ones(Tensor::ones({4}, DType::F64)), zeros(Tensor::zeros({4}, DType::F64));
  bool ok = matches("layernorm", layer_norm(Var(x), ones, zeros), {-1.0690, -0.5345, 0.0, 1.6036});
  ok = matches("rmsnorm", rms_norm(Var(x), ones), {0.2828, 0.5657, 0.8485, 1.6971}) && ok;

  // Gradients with weights that are not all one, so that every term of the backward counts.
  const Tensor gamma = Tensor::from_vector({1.0, 0.5, -0.25, 2.0}, {4}, DType::F64);
  const Tensor beta = Tensor::from_vector({0.1, 0.2, 0.3, 0.4}, {4}, DType::F64);
  const GradFn ln = [](const std::vector<Var>& v) { return layer_norm(v[0], v[1], v[2]); };
  const GradFn rms = [](const std::vector<Var>& v) { return rms_norm(v[0], v[1]); };
  ok = gradchecks("layernorm", ln, {x, gamma, beta}, {"x", "gamma", "beta"}) && ok;
  ok = gradchecks("rmsnorm", rms, {x, gamma}, {"x", "weight"}) && ok;
  if (cuda_available()) {  // normlab::cuda is linked and a GPU is present: the same on the device
    ok = gradchecks("layernorm/cuda", on_device(ln, Device::cuda()), {x, gamma, beta}, {"x", "gamma", "beta"}) && ok;
    ok = gradchecks("rmsnorm/cuda", on_device(rms, Device::cuda()), {x, gamma}, {"x", "weight"}) && ok;
  }
#ifdef EXPECT_CUDA_BACKEND
  const bool expect_cuda = true;  // linked normlab::cuda, whose static initializer registers it
#else
  const bool expect_cuda = false;
#endif
  std::printf("CUDA backend %s, device %s\n", cuda_backend_linked() ? "linked" : "not linked",
              cuda_available() ? "found" : "not found");
  if (cuda_backend_linked() != expect_cuda) {
    std::printf("the CUDA backend should %sbe registered\n", expect_cuda ? "" : "not ");
    ok = false;
  }
  std::printf("%s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
