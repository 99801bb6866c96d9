#include "xiong/outcomes.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "data/dataset.h"
#include "data/markov.h"
#include "config/config.h"

namespace normlab::xiong {

std::string Baseline::describe() const {
  return fmt::format("Baseline: {} = {} nats; a run *learned* if its final validation loss is <= {}; a run "
                     "*diverged* if a loss is non-finite, or above 1.5 ln V = {} after step {} (it then counts as "
                     "its loss at init).", name, num(loss, 3), num(learn_below, 3), num(diverge_above, 3),
                     kDivergenceAfter);
}

Baseline copy_baseline(const Context& ctx) { return copy_baseline(ctx.config_path(ctx.grids.copy_config)); }

Baseline copy_baseline(const std::string& config_path) {
  const RunConfig c = load_config(config_path);
  Baseline b;
  b.loss = std::log(static_cast<double>(c.data.copy_vocab - 1));
  b.name = fmt::format("chance (ln {})", c.data.copy_vocab - 1);
  b.learn_below = b.loss / 2;
  b.diverge_above = 1.5 * std::log(static_cast<double>(c.data.copy_vocab));
  return b;
}

Baseline translation_baseline(const std::string& config_path) {
  const RunConfig c = load_config(config_path);
  NL_CHECK(c.data.source == "seq2seq_translate", "reproduce",
           "the translation baseline needs data.source = \"seq2seq_translate\", got '{}'", c.data.source);
  Baseline b;
  b.loss = std::log(static_cast<double>(c.data.copy_vocab + 1));
  b.name = fmt::format("chance (ln {})", c.data.copy_vocab + 1);
  b.learn_below = b.loss / 2;
  b.diverge_above = 1.5 * std::log(static_cast<double>(c.data.copy_vocab + 3));
  return b;
}

double unigram_cross_entropy(const std::string& text, const std::string& tokenizer_kind, double val_fraction) {
  const auto tokenizer = make_tokenizer(tokenizer_kind, text);
  const std::vector<int32_t> ids = tokenizer->encode(text);
  const size_t n_val = static_cast<size_t>(std::floor(static_cast<double>(ids.size()) * val_fraction));
  const size_t n_train = ids.size() - n_val;
  std::vector<double> count(static_cast<size_t>(tokenizer->vocab_size()), 1.0);  // add-one
  for (size_t i = 0; i < n_train; ++i) count[static_cast<size_t>(ids[i])] += 1.0;
  const double total = static_cast<double>(n_train) + static_cast<double>(count.size());
  double nll = 0;
  for (size_t i = n_train; i < ids.size(); ++i) nll -= std::log(count[static_cast<size_t>(ids[i])] / total);
  return n_val > 0 ? nll / static_cast<double>(n_val) : NAN;
}

Baseline text_baseline(const Context& ctx) { return text_baseline(ctx.config_path(ctx.grids.text_config)); }

Baseline text_baseline(const std::string& config_path) {
  const RunConfig c = load_config(config_path);
  NL_CHECK(c.data.source == "default", "reproduce", "the text baseline needs data.source = \"default\", got '{}'",
           c.data.source);
  Baseline b;
  b.name = "unigram cross-entropy of the validation characters";
  b.loss = unigram_cross_entropy(default_corpus(), c.data.tokenizer, c.data.val_fraction);
  b.learn_below = b.loss;
  b.diverge_above = 1.5 * std::log(static_cast<double>(make_tokenizer(c.data.tokenizer, default_corpus())->vocab_size()));
  return b;
}

std::vector<Baseline> text_markov_baselines(const Context& ctx) {
  const std::string path = ctx.config_path(ctx.grids.text_config);
  static std::map<std::string, std::vector<Baseline>> computed;  // the same text for every figure
  if (const auto it = computed.find(path); it != computed.end()) return it->second;
  std::vector<Baseline> out = markov_baselines(path, {1, 2});
  out[0].name += " (bigram)";
  out[1].name += " (trigram)";
  return computed[path] = out;
}

std::vector<Baseline> markov_baselines(const std::string& config_path, const std::vector<int>& orders) {
  const TokenStreams streams = load_token_streams(load_config(config_path).data);
  std::vector<Baseline> out;
  for (const int order : orders) {
    Baseline b;
    b.name = fmt::format("order-{} Markov model", order);
    b.loss = MarkovModel(streams.train, streams.vocab_size, order).cross_entropy(streams.val);
    out.push_back(b);
  }
  return out;
}

double lr_sensitivity(const std::vector<double>& capped) {
  if (capped.empty()) return NAN;
  double best = INFINITY, sum = 0;
  for (const double v : capped) {
    if (!std::isfinite(v)) return NAN;
    best = std::min(best, v);
    sum += v;
  }
  return sum / static_cast<double>(capped.size()) - best;
}

double basin_width(const std::vector<double>& lrs, const std::vector<double>& capped, double within) {
  if (capped.empty() || capped.size() != lrs.size()) return NAN;
  double best = INFINITY;
  for (const double v : capped) {
    if (!std::isfinite(v)) return NAN;
    best = std::min(best, v);
  }
  double low = INFINITY, high = -INFINITY;
  for (size_t i = 0; i < lrs.size(); ++i)
    if (capped[i] <= best + within) {
      low = std::min(low, lrs[i]);
      high = std::max(high, lrs[i]);
    }
  return std::log10(high) - std::log10(low);
}

std::string ArmSummary::text(int digits) const {
  std::string out = fmt::format("{} (learned {}/{}", mean_ci_text(capped, digits), learned, n);
  if (diverged > 0) out += fmt::format(", diverged {}", diverged);
  return out + ")";
}

ArmSummary summarize(const TrainingResults& runs, const TrainPoint& point, const std::vector<int>& seeds,
                     const Baseline& baseline) {
  ArmSummary s;
  for (const RunOutcome* r : runs.over_seeds(point, seeds)) {
    ++s.n;
    s.diverged += r->status == RunStatus::Diverged;
    s.learned += r->ok() && r->final_val <= baseline.learn_below;
  }
  s.capped = runs.per_seed(point, seeds, [](const RunOutcome& r) { return r.capped_final(); });
  return s;
}

}  // namespace normlab::xiong
