// normlab sample RUN_DIR --prompt TEXT --tokens N [--temperature T] [--seed S]
// normlab sample RUN_DIR --source TEXT [--beam K]     (encoder-decoder runs: beam search, 1 = greedy)
// normlab sample RUN_DIR --bleu N [--beam K]          (encoder-decoder runs: corpus BLEU of N validation pairs)
// Generates text from a run's final checkpoint, one token at a time (the context is cropped to the
// model's context_length).
#include <fmt/core.h>

#include <cmath>
#include <filesystem>

#include "autograd/tape.h"
#include "core/files.h"
#include "core/ops.h"
#include "data/seq2seq.h"
#include "train/checkpoint.h"
#include "train/translate.h"
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

// An encoder-decoder run: translate `source` (or, with bleu_pairs > 0, the first validation pairs,
// printing corpus BLEU). The data is rebuilt from the run's config (its vocabulary and special ids).
void translate_run(const std::filesystem::path& dir, RunConfig& rc, const std::string& source, int64_t beam,
                   int64_t bleu_pairs) {
  const std::unique_ptr<Dataset> data = make_dataset(rc.data);
  const PairDataset* pairs = as_pair_dataset(*data);
  NL_CHECK(pairs, "sample", "{}: data.source \"{}\" is not sequence-to-sequence data", dir.string(), rc.data.source);
  rc.model.vocab_size = data->vocab_size();
  TransformerLM model(rc.model);
  load_model_weights(dir.string(), model);
  const DecodeOptions options{beam, 0, 1.0};
  if (bleu_pairs > 0) {
    const BleuReport report = validation_bleu(model, *pairs, bleu_pairs, options);
    for (size_t i = 0; i < report.sources.size(); ++i)
      fmt::print("S\t{}\nR\t{}\nH\t{}\n", report.sources[i], report.references[i], report.hypotheses[i]);
    fmt::print("BLEU {:.2f} on {} validation pairs (beam {}, sacreBLEU 13a)\n", report.bleu, report.sources.size(),
               beam);
    return;
  }
  const std::vector<int32_t> ids = pair_ids(*pairs, source);
  fmt::print("{}\n", pair_text(*pairs, translate(model, ids, *pairs->pair_tokens(), options)));
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
  auto source = std::make_shared<std::string>();
  auto beam = std::make_shared<int64_t>(5);
  auto bleu = std::make_shared<int64_t>(0);
  cmd->add_option("--source", *source, "encoder-decoder runs: the text to translate (synthetic tasks: words w0 w1 ...)")
      ->type_name("TEXT");
  cmd->add_option("--beam", *beam, "encoder-decoder runs: beam size (1 = greedy)")->capture_default_str()->type_name("K");
  cmd->add_option("--bleu", *bleu, "encoder-decoder runs: translate the first N validation pairs and print corpus BLEU")
      ->type_name("N");
  cmd->callback([=, &exit_code] {
    namespace fs = std::filesystem;
    if (!std::isfinite(*temperature) || *temperature < 0.0)
      usage_error("sample", "--temperature must be a finite number >= 0 (0 = greedy), got {}", *temperature);
    if (*tokens < 0) usage_error("sample", "--tokens must be >= 0, got {}", *tokens);
    const fs::path dir(*run_dir);
    RunConfig rc = load_config((dir / "config.toml").string(), {});
    if (rc.model.arch == ModelArch::EncoderDecoder) {
      if (*beam < 1) usage_error("sample", "--beam must be >= 1, got {}", *beam);
      if (*bleu < 0) usage_error("sample", "--bleu must be >= 0, got {}", *bleu);
      if (source->empty() && *bleu == 0) usage_error("sample", "an encoder-decoder run needs --source TEXT or --bleu N");
      translate_run(dir, rc, *source, *beam, *bleu);
      return;
    }
    if (!source->empty() || *bleu > 0)
      usage_error("sample", "--source and --bleu need an encoder-decoder run; {} is model.arch = \"{}\"", dir.string(),
                  rc.model.arch);
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
