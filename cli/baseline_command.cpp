// normlab baseline CONFIG.toml [overrides] [--orders 0,1,2,3]
// The validation loss of order-k Markov models of the config's text (data/markov.h: Witten-Bell,
// fitted on the training split, scored on the whole validation split), in nats per token: what a
// language model of that data must beat to have learned more than character statistics.
// For a translation corpus (data.source = "corpus:DIR"): the BLEU and chrF of the copy and
// word-by-word baselines (data/translation_baselines.h) on its validation and test splits, against
// all their references.
#include <filesystem>
#include <tuple>

#include <fmt/core.h>

#include <cmath>

#include "cli/commands.h"
#include "config/config.h"
#include "data/dataset.h"
#include "data/bleu.h"
#include "data/chrf.h"
#include "data/markov.h"
#include "data/translation_baselines.h"
#include "data/translation_corpus.h"
#include "io/atomic_file.h"

namespace normlab::cli {

namespace {

// Each baseline's translations of the split, one per line, as DIR/<split>_<name>.txt.
void write_hypotheses(const std::string& out_dir, const std::string& split, const std::string& name,
                      const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  std::filesystem::create_directories(out_dir);
  write_file_atomic((std::filesystem::path(out_dir) / (split + "_" + name + ".txt")).string(), text);
}

void print_translation_baselines(const std::string& dir, const std::string& hypotheses_dir) {
  const TranslationCorpus corpus = load_translation_corpus(dir);
  std::vector<std::string> sources, targets;
  for (const CorpusPair& p : corpus.train) {
    sources.push_back(p.source);
    targets.push_back(p.target);
  }
  const WordByWord frequent(sources, targets, WordChoice::MostFrequent), dice(sources, targets, WordChoice::Dice);
  for (const auto& [name, split] : {std::pair{"valid", &corpus.valid}, std::pair{"test", &corpus.test}}) {
    std::vector<std::vector<std::string>> refs(2);
    std::vector<std::string> copy, by_frequency, by_dice;
    for (const CorpusPair& p : *split) {
      refs[0].push_back(p.target);
      refs[1].push_back(p.second);
      copy.push_back(p.source);
      by_frequency.push_back(frequent.translate(p.source));
      by_dice.push_back(dice.translate(p.source));
    }
    fmt::print("{} ({} pairs):\n", name, split->size());
    for (const auto& [label, file, hyps] : {std::tuple{"copy the source", "copy", &copy},
                                            std::tuple{"word by word (most frequent)", "most_frequent", &by_frequency},
                                            std::tuple{"word by word (Dice)", "dice", &by_dice}}) {
      fmt::print("  {:<29} {}  {}\n", label, corpus_bleu_score(*hyps, refs).format(), corpus_chrf(*hyps, refs).format());
      if (!hypotheses_dir.empty()) write_hypotheses(hypotheses_dir, name, file, *hyps);
    }
  }
}

}  // namespace

CLI::App* add_baseline_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("baseline", "Order-k Markov baselines of a config's text (validation nats/token)");
  auto config = std::make_shared<std::string>();
  auto overrides = std::make_shared<std::vector<std::string>>();
  auto orders = std::make_shared<std::vector<int>>(std::vector<int>{0, 1, 2, 3});
  auto hypotheses = std::make_shared<std::string>();
  cmd->add_option("config", *config, "config file")->required()->type_name("CONFIG");
  cmd->add_option("overrides", *overrides, "overrides such as data.source=corpus.txt")->type_name("KEY=VALUE");
  cmd->add_option("--orders", *orders, "Markov orders (comma-separated)")->delimiter(',')
      ->check(CLI::Range(0, 6))->capture_default_str();
  cmd->add_option("--hypotheses", *hypotheses, "translation corpora: write each baseline's translations to "
                  "DIR/<split>_<copy|most_frequent|dice>.txt (for normlab bleu --against)")->type_name("DIR");
  cmd->callback([=] {
    const RunConfig rc = load_config(*config, *overrides);
    if (rc.data.source.rfind("corpus:", 0) == 0) return print_translation_baselines(rc.data.source.substr(7), *hypotheses);
    if (rc.data.source == "copy") usage_error("baseline", "{} trains the copy task, which has no text", *config);
    if (rc.model.arch == ModelArch::Encoder)
      fmt::print(stderr, "note: {} trains a masked LM (model.arch = \"encoder\"); these baselines predict the next "
                         "token from the previous ones, so only order 0 (the unigram) is a baseline of its loss\n",
                 *config);
    const TokenStreams streams = load_token_streams(rc.data);
    fmt::print("{} ({} tokenizer, vocabulary {}): {} training tokens, {} validation tokens; uniform ln V = {:.4f}\n",
               rc.data.source, rc.data.tokenizer, streams.vocab_size, streams.train.size(), streams.val.size(),
               std::log(static_cast<double>(streams.vocab_size)));
    fmt::print("order  validation nats/token\n");
    for (int order : *orders) {
      const MarkovModel model(streams.train, streams.vocab_size, order);
      fmt::print("{:>5}  {:.4f}\n", order, model.cross_entropy(streams.val));
    }
  });
  return cmd;
}

}  // namespace normlab::cli
