// normlab baseline CONFIG.toml [overrides] [--orders 0,1,2,3]
// The validation loss of order-k Markov models of the config's text (data/markov.h: Witten-Bell,
// fitted on the training split, scored on the whole validation split), in nats per token: what a
// language model of that data must beat to have learned more than character statistics.
// For a translation corpus (data.source = "corpus:DIR"): the BLEU and chrF of the copy and
// word-by-word baselines (data/translation_baselines.h) on its validation and test splits, against
// all their references.
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

namespace normlab::cli {

namespace {

void print_translation_baselines(const std::string& dir) {
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
    for (const auto& [label, hyps] : {std::pair{"copy the source", &copy},
                                      std::pair{"word by word (most frequent)", &by_frequency},
                                      std::pair{"word by word (Dice)", &by_dice}})
      fmt::print("  {:<29} {}  {}\n", label, corpus_bleu_score(*hyps, refs).format(), corpus_chrf(*hyps, refs).format());
  }
}

}  // namespace

CLI::App* add_baseline_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("baseline", "Order-k Markov baselines of a config's text (validation nats/token)");
  auto config = std::make_shared<std::string>();
  auto overrides = std::make_shared<std::vector<std::string>>();
  auto orders = std::make_shared<std::vector<int>>(std::vector<int>{0, 1, 2, 3});
  cmd->add_option("config", *config, "config file")->required()->type_name("CONFIG");
  cmd->add_option("overrides", *overrides, "overrides such as data.source=corpus.txt")->type_name("KEY=VALUE");
  cmd->add_option("--orders", *orders, "Markov orders (comma-separated)")->delimiter(',')
      ->check(CLI::Range(0, 6))->capture_default_str();
  cmd->callback([=] {
    const RunConfig rc = load_config(*config, *overrides);
    if (rc.data.source.rfind("corpus:", 0) == 0) return print_translation_baselines(rc.data.source.substr(7));
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
