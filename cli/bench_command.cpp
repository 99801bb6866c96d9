// normlab bench train CONFIG.toml [section.key=value ...] [--steps N] [--warmup W] [--threads T]
//                    [--random-data] [--json] [--resolved-config FILE] [--losses-from FILE]
//
// Times whole training steps of the model, optimizer and batch shape a config describes
// (train/step_timing.h): W untimed warm-up steps, then N timed steps, each the trainer's own
// step (train/train_step.h: forward under train.precision, loss, backward with fp16 loss
// scaling, clipping, optimizer step, zero_grad), then one step whose memory is measured. Batches
// are drawn before timing (the trainer's training stream, or uniform random ids of
// model.vocab_size with --random-data or data.source = "random"), so the figures are the step alone.
//
// Figures: median/min/max ms per step, tokens/s = B T / median, peak RSS (getrusage ru_maxrss),
// the share of step time per op family (core/profiler.h; "other" = the rest: tape, copies,
// embedding, cross-entropy, allocation), and achieved GFLOP/s = flops / median with
//   flops per step = 6 N B T + 12 L B T^2 C
// N = the weights every token multiplies through: every 2-d parameter except the position
// embedding, i.e. the Linear weights plus the head (V x C, the token embedding when tied).
// 6 N B T: 2 per multiply-add in forward, twice that in backward (Kaplan et al. 2020).
// 12 L B T^2 C: per layer, q k^T and p v are 2 B T^2 C flops each forward, twice that backward;
// the causal mask's upper triangles are counted in full because the kernels compute them
// (the PaLM appendix's 12 L H Q T per token). Biases, norms, softmax and the loss are not counted.
//
// train.device = "cuda": model and batches on the GPU; each step reads the loss and the gradient
// norm back to the host, which waits for the GPU, so the timed steps together are whole (the
// optimizer's kernels of one step finish inside the next). The op-family shares then measure host-side launch time, not
// kernel time: pass --no-profile there.
//
// --losses-from FILE (a `normlab grads` dump: "param.<name>", "inputs", "targets"): loads the
// parameters and the batch and trains N steps on that one batch, printing the loss before each
// update: the first losses to compare with bench/torch_reference.py --load-grads FILE --losses N.
#include <fmt/core.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "autograd/autocast.h"
#include "autograd/ops.h"
#include "core/backend.h"
#include "core/denormals.h"
#include "core/cpu/blas_core.h"
#include "core/cpu/f32_gemm.h"
#include "core/cpu/half_gemm.h"
#include "core/profiler.h"
#include "cli/commands.h"
#include "sweep/exit_codes.h"
#include "config/config.h"
#include "io/safetensors.h"
#include "train/step_timing.h"
#include "nn/transformer.h"

namespace normlab::cli {

namespace {

struct BenchOptions {
  std::string config_path;
  std::vector<std::string> overrides;
  int64_t steps = 20, warmup = 3;
  int threads = 0;  // 0: the config's train.threads
  bool json = false, random_data = false, no_profile = false;
  std::string resolved_config, losses_from;
};

// N of the flop formula above.
int64_t matmul_parameter_count(const TransformerLM& model) {
  int64_t n = 0;
  for (const auto& [name, param] : model.named_parameters()) {
    if (param.dim() != 2 || name.starts_with("pos_emb")) continue;
    if (name.starts_with("tok_emb") && !model.config().tie_embeddings) continue;
    n += param.value().numel();
  }
  return n;
}

// The dump's "param.<name>" tensors must be exactly the model's, in its dtype and shapes.
void load_parameters(TransformerLM& model, const SafetensorsFile& dump) {
  NoGradGuard no_grad;
  std::vector<TensorSpec> expected;
  for (const auto& [name, param] : model.named_parameters())
    expected.push_back({"param." + name, param.dtype(), param.shape()});
  check_tensors(dump, expected, "param.", "bench");
  for (auto& [name, param] : model.named_parameters()) param.value().copy_(dump.get("param." + name));
}

void run_losses(const BenchOptions& opt, const SafetensorsFile& dump, const RunConfig& config, Learner& learner) {
  load_parameters(learner.model, dump);
  const Batch batch{dump.get("inputs").to(DType::I32), dump.get("targets").to(DType::I32)};
  std::vector<double> losses;
  for (int64_t step = 0; step < opt.steps; ++step) {
    losses.push_back(train_step(learner, config, batch, step).loss);
    if (!opt.json) fmt::print("step {:4d}  loss {:.10f}\n", step, losses.back());
  }
  if (opt.json) {
    nlohmann::json out = {{"framework", "normlab"}, {"mode", "losses"}, {"losses", losses}};
    fmt::print("{}\n", out.dump());
  }
}

// Percent of the timed step time spent in each op family; "other" is the unprofiled rest.
nlohmann::ordered_json op_family_breakdown(const StepTimes& times, bool profiled) {
  nlohmann::ordered_json breakdown = nlohmann::ordered_json::object();
  double accounted = 0.0;
  for (int f = 0; f < kOpFamilyCount; ++f) {
    const auto family = static_cast<OpFamily>(f);
    if (family == OpFamily::Other) continue;
    const double pct = times.total_ms > 0 ? 100.0 * times.totals.seconds[f] * 1e3 / times.total_ms : 0.0;
    breakdown[op_family_name(family)] = pct;
    accounted += pct;
  }
  breakdown["other"] = profiled ? std::max(0.0, 100.0 - accounted) : 0.0;
  return breakdown;
}

void print_timing(const BenchOptions& opt, const nlohmann::ordered_json& out) {
  const auto d = [&](const char* key) { return out[key].get<double>(); };
  fmt::print("normlab bench: {}  L={} C={} H={} V={} B={} T={}  {} params ({} in matmuls)  {}  {}  threads {}  blas {}\n",
             opt.config_path, out["layers"].get<int64_t>(), out["d_model"].get<int64_t>(),
             out["heads"].get<int64_t>(), out["vocab"].get<int64_t>(), out["batch"].get<int64_t>(),
             out["context"].get<int64_t>(), out["params"].get<int64_t>(), out["matmul_params"].get<int64_t>(),
             out["optimizer"].get<std::string>(), out["device"].get<std::string>(), out["threads"].get<int>(),
             out["blas"].get<std::string>());
  fmt::print("  step time   median {:.2f} ms   min {:.2f}   max {:.2f}   ({} timed, {} warm-up)\n",
             d("median_ms"), d("min_ms"), d("max_ms"), opt.steps, opt.warmup);
  fmt::print("  throughput  {:.0f} tokens/s   {:.2f} GFLOP/s ({:.3g} GFLOP/step)\n", d("tokens_per_s"),
             d("gflops"), d("flops_per_step") / 1e9);
  fmt::print("  peak RSS    {:.1f} MiB\n", d("peak_rss_mib"));
  fmt::print("  fp32 GEMM   {}\n", out["f32_gemm"].get<std::string>());
  if (out.contains("half_gemm")) fmt::print("  half GEMM   {}\n", out["half_gemm"].get<std::string>());
  const nlohmann::ordered_json& memory = out["memory"];
  if (!memory.empty())
    fmt::print("  memory      params {:.1f} + grads {:.1f} + optimizer {:.1f} + activations {:.1f} = required {:.1f} MiB;\n"
               "              allocator peak {:.1f} MiB ({:.2f}x required), peak RSS {:.2f}x required;\n"
               "              train's estimate {:.1f} MiB ({:.2f}x allocator peak)\n",
               memory["params_mib"].get<double>(), memory["grads_mib"].get<double>(),
               memory["optimizer_state_mib"].get<double>(), memory["activations_mib"].get<double>(),
               memory["required_mib"].get<double>(), memory["allocator_peak_mib"].get<double>(),
               memory["allocator_peak_over_required"].get<double>(), memory["rss_over_required"].get<double>(),
               memory["estimate_mib"].get<double>(), memory["estimate_over_allocator_peak"].get<double>());
  if (!opt.no_profile) {
    fmt::print("  time by op family (% of timed step time):\n");
    for (auto& [name, pct] : out["breakdown_pct"].items()) fmt::print("    {:<12} {:5.1f}%\n", name, pct.get<double>());
  }
}

void run_timing(const BenchOptions& opt, const RunConfig& config, const Dataset* dataset, Learner& learner) {
  const StepTimes times = time_training_steps({opt.warmup, opt.steps, !opt.no_profile, true}, config, dataset, learner);
  const TransformerLM& model = learner.model;
  const ModelConfig& m = config.model;
  const int64_t b = config.train.batch_size, t = config.train.context;
  const int64_t matmul_params = matmul_parameter_count(model);
  const double flops = 6.0 * static_cast<double>(matmul_params) * static_cast<double>(b * t) +
                       12.0 * static_cast<double>(m.n_layers * b * t * t * m.d_model);
  const double seconds = times.median_ms * 1e-3;
  nlohmann::ordered_json out = {
      {"framework", "normlab"}, {"config", opt.config_path}, {"device", config.train.device.str()},
      {"threads", num_threads()},
      {"batch", b}, {"context", t}, {"layers", m.n_layers}, {"d_model", m.d_model},
      {"heads", m.n_heads}, {"vocab", m.vocab_size}, {"params", model.parameter_count()},
      {"matmul_params", matmul_params}, {"optimizer", enum_name(config.optim.name)}, {"steps", opt.steps},
      {"warmup", opt.warmup}, {"median_ms", times.median_ms}, {"min_ms", times.sorted_ms.front()},
      {"max_ms", times.sorted_ms.back()}, {"blas_core", blas_core_name()}, {"blas", blas_core_description()},
      {"f32_gemm", f32_gemm_description()},
      {"tokens_per_s", static_cast<double>(b * t) / seconds}, {"flops_per_step", flops},
      {"gflops", flops / seconds / 1e9}, {"peak_rss_mib", peak_rss_mib()}, {"final_loss", times.last_loss},
      {"profiled", !opt.no_profile}, {"breakdown_pct", op_family_breakdown(times, !opt.no_profile)},
      {"memory", times.memory}};
  if (config.train.precision != Precision::Fp32)
    out["half_gemm"] = half_gemm_description(compute_dtype(config.train.precision));
  if (opt.json)
    fmt::print("{}\n", out.dump());
  else
    print_timing(opt, out);
}

void run_bench_train(const BenchOptions& opt) {
  if (opt.steps <= 0) usage_error("bench", "--steps must be > 0, got {}", opt.steps);
  if (opt.warmup < 0) usage_error("bench", "--warmup must be >= 0, got {}", opt.warmup);
  RunConfig config = load_config(opt.config_path, opt.overrides);
  set_num_threads(opt.threads > 0 ? opt.threads : config.train.threads);
  set_flush_denormals(config.train.flush_denormals);
  std::unique_ptr<Dataset> dataset;
  SafetensorsFile dump;
  const bool random = opt.random_data || config.data.source == "random";
  if (!opt.losses_from.empty()) {  // the dump decides the vocabulary and the dtype
    dump = load_safetensors(opt.losses_from);
    const Tensor& embedding = dump.get("param.tok_emb.weight");
    config.model.vocab_size = embedding.size(0);
    config.model.dtype = embedding.dtype() == DType::F64 ? ParamDType::Float64 : ParamDType::Float32;
  } else if (!random) {
    dataset = make_dataset(config.data, config.model.arch == ModelArch::Encoder);
    config.model.vocab_size = dataset->vocab_size();
  }
  if (!opt.resolved_config.empty()) {
    std::ofstream file(opt.resolved_config);
    file << config_to_toml(config);
    NL_CHECK(file.good(), "bench", "cannot write --resolved-config '{}'", opt.resolved_config);
  }
  TransformerLM model(config.model);
  model.to(config.train.device);  // train.device=cuda: built on the host, then moved
  model.train();
  std::unique_ptr<Optimizer> optimizer = make_optimizer(config.optim, model.named_parameters());
  LossScaler scaler = make_loss_scaler(config.train);
  Learner learner{model, *optimizer, scaler};
  if (!opt.losses_from.empty()) run_losses(opt, dump, config, learner);
  else run_timing(opt, config, dataset.get(), learner);
}

}  // namespace

CLI::App* add_bench_command(CLI::App& app, int& exit_code) {
  auto* bench = app.add_subcommand("bench", "Benchmarks (compare with bench/torch_reference.py)");
  bench->require_subcommand(1);
  auto* train = bench->add_subcommand("train", "Time training steps of a config's model and optimizer");
  auto opt = std::make_shared<BenchOptions>();
  train->add_option("config", opt->config_path, "config file (TOML)")->required()->type_name("CONFIG");
  train->add_option("overrides", opt->overrides, "section.key=value overrides")->type_name("KEY=VALUE");
  train->add_option("--steps", opt->steps, "timed steps (--losses-from: steps to train)")->capture_default_str()->type_name("N");
  train->add_option("--warmup", opt->warmup, "untimed warm-up steps")->capture_default_str()->type_name("N");
  train->add_option("--threads", opt->threads, "CPU threads (default: train.threads)")->type_name("N");
  train->add_flag("--random-data", opt->random_data, "uniform random ids of model.vocab_size");
  train->add_flag("--json", opt->json, "print one JSON line with every figure");
  train->add_flag("--no-profile", opt->no_profile, "do not time op families");
  train->add_option("--resolved-config", opt->resolved_config,
                    "write the resolved config (vocab from the data) to this TOML file")
      ->type_name("FILE");
  train->add_option("--losses-from", opt->losses_from,
                    "a `normlab grads` dump: train --steps steps on its parameters and batch, printing losses")
      ->type_name("FILE");
  train->callback([opt, &exit_code] {
    run_bench_train(*opt);
    exit_code = exit_codes::kDone;
  });
  return bench;
}

}  // namespace normlab::cli
