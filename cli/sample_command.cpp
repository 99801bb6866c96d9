// normlab sample RUN_DIR --prompt TEXT --tokens N [--temperature T] [--seed S]
// Generates text from a run's final checkpoint, one token at a time (the context is cropped to the
// model's context_length).
#include <fmt/core.h>

#include <cmath>
#include <filesystem>

#include "autograd/tape.h"
#include "core/files.h"
#include "core/ops.h"
#include "train/checkpoint.h"
#include "cli/commands.h"
#include "config/config.h"

namespace normlab::cli {

namespace {

// Index drawn from softmax(logits / temperature); greedy when temperature == 0.
int32_t pick(const std::vector<double>& logits, double temperature, Generator& gen) {
  size_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[best]) best = i;
  if (temperature <= 0.0) return static_cast<int32_t>(best);
  std::vector<double> p(logits.size());
  double total = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) total += p[i] = std::exp((logits[i] - logits[best]) / temperature);
  double u = gen.uniform() * total;
  for (size_t i = 0; i < p.size(); ++i)
    if ((u -= p[i]) <= 0.0) return static_cast<int32_t>(i);
  return static_cast<int32_t>(p.size() - 1);
}

}  // namespace

CLI::App* add_sample_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("sample", "Generate text from a trained run");
  auto run_dir = std::make_shared<std::string>();
  auto prompt = std::make_shared<std::string>("\n");
  auto tokens = std::make_shared<int64_t>(200);
  auto temperature = std::make_shared<double>(0.8);
  auto seed = std::make_shared<uint64_t>(0);
  cmd->add_option("run_dir", *run_dir, "run directory")->required()->type_name("RUN_DIR");
  cmd->add_option("--prompt", *prompt, "text to continue")->type_name("TEXT");
  cmd->add_option("--tokens", *tokens, "tokens to generate")->capture_default_str()->type_name("N");
  cmd->add_option("--temperature", *temperature, "0 = greedy")->capture_default_str()->type_name("T");
  cmd->add_option("--seed", *seed, "sampling seed")->capture_default_str()->type_name("SEED");
  cmd->callback([=, &exit_code] {
    namespace fs = std::filesystem;
    if (!std::isfinite(*temperature) || *temperature < 0.0)
      usage_error("sample", "--temperature must be a finite number >= 0 (0 = greedy), got {}", *temperature);
    if (*tokens < 0) usage_error("sample", "--tokens must be >= 0, got {}", *tokens);
    const fs::path dir(*run_dir);
    RunConfig rc = load_config((dir / "config.toml").string(), {});
    if (rc.model.arch != ModelArch::Decoder)
      fail("sample", "{} is a model.arch = \"{}\" run: it predicts masked tokens and does not generate text",
           dir.string(), rc.model.arch);
    const fs::path tokenizer_path = dir / "tokenizer.json";
    if (!fs::exists(tokenizer_path))
      fail("sample", "{} has no tokenizer.json (synthetic-task runs cannot be sampled as text)", dir.string());
    const std::string tokenizer_json = read_whole_file(tokenizer_path, "sample");
    std::unique_ptr<Tokenizer> tokenizer;
    try {
      tokenizer = load_tokenizer(tokenizer_json);
    } catch (const Error& e) {
      fail("sample", "{}: {}", tokenizer_path.string(), e.what());
    }
    rc.model.vocab_size = tokenizer->vocab_size();
    TransformerLM model(rc.model);
    load_model_weights(dir.string(), model);
    model.eval();
    NoGradGuard no_grad;
    std::vector<int32_t> ids = tokenizer->encode(*prompt);
    if (ids.empty()) fail("sample", "the prompt must not be empty");
    Generator gen(*seed);
    const size_t start = ids.size();
    for (int64_t i = 0; i < *tokens; ++i) {
      const size_t ctx = std::min<size_t>(ids.size(), static_cast<size_t>(rc.model.context_length));
      std::vector<int32_t> window(ids.end() - static_cast<long>(ctx), ids.end());
      Tensor input = Tensor::from_ints(window, {1, static_cast<int64_t>(ctx)});
      const std::vector<double> logits = model.forward(input).value().to_vector();
      const int64_t vocab = rc.model.vocab_size;
      std::vector<double> last(logits.end() - vocab, logits.end());
      ids.push_back(pick(last, *temperature, gen));
    }
    fmt::print("{}{}\n", *prompt, tokenizer->decode(std::vector<int32_t>(ids.begin() + static_cast<long>(start), ids.end())));
  });
  return cmd;
}

}  // namespace normlab::cli
