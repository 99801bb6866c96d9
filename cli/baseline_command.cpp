// normlab baseline CONFIG.toml [overrides] [--orders 0,1,2,3]
// The validation loss of order-k Markov models of the config's text (data/markov.h: Witten-Bell,
// fitted on the training split, scored on the whole validation split), in nats per token: what a
// language model of that data must beat to have learned more than character statistics.
#include <fmt/core.h>

#include <cmath>

#include "cli/commands.h"
#include "config/config.h"
#include "data/dataset.h"
#include "data/markov.h"

namespace normlab::cli {

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
