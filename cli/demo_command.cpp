// `normlab demo half-rmsnorm`: the seed article's float16 overflow example. RMSNorm of
// x = (300, 1, 1, 1) built from plain float16 ops squares 300 into 90000 > 65504 = inf and returns
// (0, 0, 0, 0); the fused rms_norm keeps its statistics in float32 and returns (2.0, 0.0067, ...).
#include <cmath>
#include <string>
#include <vector>

#include <fmt/ranges.h>

#include "cli/commands.h"
#include "core/norm_ops.h"
#include "core/ops.h"
#include "sweep/exit_codes.h"

namespace normlab::cli {

namespace {

constexpr double kEps = 1e-6;

// y = x / sqrt(mean(x^2) + eps) from plain ops, each computed in float32 and rounded to x's dtype.
std::vector<double> naive_rms_norm(const Tensor& x) {
  const Tensor mean_square = ops::reduce(ReduceOp::Mean, ops::unary(UnaryOp::Square, x), -1, true);
  const Tensor rms = ops::unary(UnaryOp::Sqrt, ops::unary(UnaryOp::AddScalar, mean_square, kEps));
  return ops::div(x, rms).to_vector();
}

std::vector<double> exact_rms_norm(const std::vector<double>& x) {
  double sq = 0.0;
  for (double v : x) sq += v * v;
  const double rstd = 1.0 / std::sqrt(sq / static_cast<double>(x.size()) + kEps);
  std::vector<double> y;
  for (double v : x) y.push_back(v * rstd);
  return y;
}

void print_row(const char* label, const std::vector<double>& values) {
  fmt::print("  {:<26}", label);
  for (double v : values) fmt::print(" {:>10.6g}", v);
  fmt::print("\n");
}

void show(const std::vector<double>& values) {
  const Tensor x = Tensor::from_vector(values, {1, static_cast<int64_t>(values.size())}, DType::F16);
  const ops::NormForward fused = ops::rms_norm(x, Tensor(), kEps, false);
  fmt::print("x = ({}) in float16, eps = {}\n", fmt::join(x.to_vector(), ", "), kEps);
  print_row("exact (double):", exact_rms_norm(x.to_vector()));
  print_row("fused rms_norm (float16):", fused.y.to_vector());
  print_row("naive float16 ops:", naive_rms_norm(x));
  fmt::print("  fused rstd, kept in {}: {:.6g}\n\n", dtype_name(fused.rstd.dtype()), fused.rstd.item());
}

void run_half_rmsnorm() {
  show({300, 1, 1, 1});
  show({256, 0, 0, 0});
  fmt::print(
      "float16's largest value is 65504, so x^2 overflows once |x| > 255.9: 300^2 = 90000 and\n"
      "256^2 = 65536 round to inf, the naive mean square is inf, and x / inf = 0 loses the token.\n"
      "The fused kernel loads float16 to float32, sums the squares in double and keeps rstd in\n"
      "float32 (never rounded to 16 bits); only y, whose entries are at most sqrt(C), is rounded\n"
      "to float16. See docs/derivations.md, \"Norms in half precision\".\n");
}

}  // namespace

CLI::App* add_demo_command(CLI::App& app, int& exit_code) {
  CLI::App* demo = app.add_subcommand("demo", "Small worked examples printed to the terminal");
  demo->require_subcommand(1);
  CLI::App* half = demo->add_subcommand(
      "half-rmsnorm", "RMSNorm of (300, 1, 1, 1) in float16: float32 statistics vs naive float16 ops");
  half->callback([&exit_code] {
    run_half_rmsnorm();
    exit_code = exit_codes::kDone;
  });
  return demo;
}

}  // namespace normlab::cli
