// normlab sample RUN_DIR --prompt TEXT --tokens N [--temperature T] [--seed S]
// normlab sample RUN_DIR --source TEXT [--beam K]     (encoder-decoder runs: beam search, 1 = greedy)
// normlab sample RUN_DIR --bleu N [--beam K]          (encoder-decoder runs: corpus BLEU of N validation pairs)
// normlab sample RUN_DIR --split test [--bleu N] [--beam K] [--length-penalty A] [--checkpoint best]
//                                   [--hypotheses FILE]  (a corpus's test split against all its references)
// Generates text from a run's final checkpoint, one token at a time (the context is cropped to the
// model's context_length).
#include <fmt/core.h>

#include <cmath>
#include <filesystem>

#include "autograd/tape.h"
#include "core/files.h"
#include "core/ops.h"
#include "data/seq2seq.h"
#include "io/atomic_file.h"
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

// What an encoder-decoder run is asked: one source, or the first `pairs` pairs of a split scored.
struct TranslateRequest {
  std::string source;             // --source: translate this text
  EvalSplit split = EvalSplit::Validation;
  int64_t pairs = 0;              // --bleu N (0 with --split test: every pair)
  bool score = false;             // --bleu or --split given
  DecodeOptions options;          // --beam, --length-penalty
  std::string checkpoint = "last";  // "best": RUN/best (the best epoch by validation loss)
  std::string hypotheses_file;    // --hypotheses: the translations, one a line
};

// Prints S/R/H lines per pair (R: the first reference), then BLEU and chrF with their signatures.
void print_split_score(const SplitScore& score, const TranslateRequest& request) {
  for (size_t i = 0; i < score.sources.size(); ++i)
    fmt::print("S\t{}\nR\t{}\nH\t{}\n", score.sources[i], score.references[0][i], score.hypotheses[i]);
  fmt::print("{} pairs of the {} split, beam {}, length penalty {}\n", score.sources.size(),
             request.split == EvalSplit::Test ? "test" : "validation", request.options.beam_size,
             request.options.length_penalty);
  fmt::print("{} {}\n{}\n", score.bleu.format(), score.bleu.verbose(), score.chrf.format());
  if (request.hypotheses_file.empty()) return;
  std::string text;
  for (const std::string& h : score.hypotheses) text += h + "\n";
  write_file_atomic(request.hypotheses_file, text);
}

// An encoder-decoder run: translate a source or score a split. The data is rebuilt from the run's
// config (its vocabulary and special ids; sentencepiece: the run's saved model).
void translate_run(const std::filesystem::path& dir, RunConfig& rc, const TranslateRequest& request) {
  rc.data.saved_tokenizer_dir = dir.string();
  const std::unique_ptr<Dataset> data = make_dataset(rc.data);
  const PairDataset* pairs = as_pair_dataset(*data);
  NL_CHECK(pairs, "sample", "{}: data.source \"{}\" is not sequence-to-sequence data", dir.string(), rc.data.source);
  rc.model.vocab_size = data->vocab_size();
  TransformerLM model(rc.model);
  const std::filesystem::path weights = request.checkpoint == "best" ? dir / "best" : dir;
  NL_CHECK(request.checkpoint != "best" || std::filesystem::exists(weights), "sample",
           "{} has no best/ (it is kept by runs with train.epochs)", dir.string());
  load_model_weights(weights.string(), model);
  if (request.score) {
    const int64_t n = request.pairs > 0 ? request.pairs : INT64_MAX;
    print_split_score(score_split(model, *pairs, request.split, n, request.options), request);
    return;
  }
  const std::vector<int32_t> ids = pair_ids(*pairs, request.source);
  fmt::print("{}\n", pair_text(*pairs, translate(model, ids, *pairs->pair_tokens(), request.options)));
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
  auto request = std::make_shared<TranslateRequest>();
  auto split = std::make_shared<std::string>();
  cmd->add_option("--source", request->source,
                  "encoder-decoder runs: the text to translate (synthetic tasks: words w0 w1 ...)")->type_name("TEXT");
  cmd->add_option("--beam", request->options.beam_size, "encoder-decoder runs: beam size (1 = greedy)")
      ->capture_default_str()->type_name("K");
  cmd->add_option("--length-penalty", request->options.length_penalty,
                  "encoder-decoder runs: beam search's length penalty alpha (the paper's 1.2)")
      ->capture_default_str()->type_name("A");
  cmd->add_option("--bleu", request->pairs,
                  "encoder-decoder runs: translate the first N pairs of the split and print corpus BLEU and chrF")
      ->type_name("N");
  cmd->add_option("--split", *split, "encoder-decoder runs: the split --bleu scores (valid, or a corpus's test)")
      ->check(CLI::IsMember({"valid", "test"}))->type_name("SPLIT");
  cmd->add_option("--checkpoint", request->checkpoint, "encoder-decoder runs: last, or best (by validation loss)")
      ->check(CLI::IsMember({"last", "best"}))->capture_default_str()->type_name("WHICH");
  cmd->add_option("--hypotheses", request->hypotheses_file, "encoder-decoder runs: write the translations here")
      ->type_name("FILE");
  cmd->callback([=, &exit_code] {
    namespace fs = std::filesystem;
    if (!std::isfinite(*temperature) || *temperature < 0.0)
      usage_error("sample", "--temperature must be a finite number >= 0 (0 = greedy), got {}", *temperature);
    if (*tokens < 0) usage_error("sample", "--tokens must be >= 0, got {}", *tokens);
    const fs::path dir(*run_dir);
    RunConfig rc = load_config((dir / "config.toml").string(), {});
    TranslateRequest r = *request;
    r.split = *split == "test" ? EvalSplit::Test : EvalSplit::Validation;
    r.score = r.pairs > 0 || !split->empty();
    if (rc.model.arch == ModelArch::EncoderDecoder) {
      if (r.options.beam_size < 1) usage_error("sample", "--beam must be >= 1, got {}", r.options.beam_size);
      if (r.pairs < 0) usage_error("sample", "--bleu must be >= 0, got {}", r.pairs);
      if (r.source.empty() && !r.score)
        usage_error("sample", "an encoder-decoder run needs --source TEXT or --bleu N (or --split valid|test)");
      translate_run(dir, rc, r);
      return;
    }
    if (!r.source.empty() || r.score)
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
      tokenizer = load_tokenizer(tokenizer_json, dir);
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
