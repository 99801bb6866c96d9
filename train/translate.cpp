#include "train/translate.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "autograd/tape.h"
#include "core/error.h"
#include "data/bleu.h"
#include "nn/beam_search.h"

namespace normlab {

namespace {

// log-softmax of one row, in double.
std::vector<double> log_softmax(std::vector<double> row) {
  const double top = *std::max_element(row.begin(), row.end());
  double total = 0.0;
  for (double z : row) total += std::exp(z - top);
  const double log_total = top + std::log(total);
  for (double& z : row) z -= log_total;
  return row;
}

// Restores a module's training mode when it leaves scope.
class EvalModeGuard {
 public:
  explicit EvalModeGuard(Module& module) : module_(module), was_training_(module.is_training()) { module.eval(); }
  ~EvalModeGuard() { module_.train(was_training_); }
  EvalModeGuard(const EvalModeGuard&) = delete;
  EvalModeGuard& operator=(const EvalModeGuard&) = delete;

 private:
  Module& module_;
  bool was_training_;
};

}  // namespace

std::vector<int32_t> translate(TransformerLM& model, const std::vector<int32_t>& source, const PairTokens& tokens,
                               const DecodeOptions& options) {
  const ModelConfig& config = model.config();
  NL_CHECK(config.arch == ModelArch::EncoderDecoder, "translate", "needs model.arch = \"encoder_decoder\", got \"{}\"",
           config.arch);
  std::vector<int32_t> with_eos = source;
  with_eos.push_back(tokens.eos);
  const auto s = static_cast<int64_t>(with_eos.size());
  NL_CHECK(s <= config.context_length, "translate", "the source + EOS has {} tokens, more than context_length {}", s,
           config.context_length);
  NoGradGuard no_grad;
  const EvalModeGuard eval(model);
  const Device device = model.parameters().front().value().device();
  // The encoder's output for n copies of the source (n = the live hypotheses), made once per n, so
  // that every step decodes all live prefixes (they have one length) in one batch.
  std::map<size_t, Var> memories;
  const auto memory_for = [&](size_t n) {
    if (!memories.count(n)) {
      std::vector<int32_t> copies;
      for (size_t i = 0; i < n; ++i) copies.insert(copies.end(), with_eos.begin(), with_eos.end());
      memories[n] = model.encode(Tensor::from_ints(copies, {static_cast<int64_t>(n), s}).to(device), Tensor());
    }
    return memories[n];  // (n,S,C)
  };
  const NextTokenScorer scorer = [&](const std::vector<std::vector<int32_t>>& prefixes) {
    const size_t n = prefixes.size(), t = prefixes.front().size() + 1;
    std::vector<int32_t> ids;
    for (const std::vector<int32_t>& prefix : prefixes) {
      NL_CHECK(prefix.size() + 1 == t, "translate", "prefixes of {} and {} tokens in one step", t - 1, prefix.size());
      ids.push_back(tokens.bos);
      ids.insert(ids.end(), prefix.begin(), prefix.end());
    }
    const Tensor logits = model.decode(Tensor::from_ints(ids, {static_cast<int64_t>(n), static_cast<int64_t>(t)}).to(device),
                                       memory_for(n), Tensor()).value();  // (n,T,V)
    const std::vector<double> all = logits.to_vector();
    const auto v = static_cast<size_t>(logits.size(2));
    std::vector<std::vector<double>> rows;
    for (size_t i = 0; i < n; ++i) {
      const auto last = all.begin() + static_cast<std::ptrdiff_t>((i * t + t - 1) * v);  // row i, position T-1
      rows.push_back(log_softmax({last, last + static_cast<std::ptrdiff_t>(v)}));
    }
    return rows;
  };
  const int64_t max_length =
      options.max_length > 0 ? std::min(options.max_length, config.context_length) : config.context_length;
  std::vector<int32_t> best =
      beam_search(scorer, {options.beam_size, max_length, options.length_penalty, tokens.eos}).front().tokens;
  if (!best.empty() && best.back() == tokens.eos) best.pop_back();
  return best;
}

BleuReport validation_bleu(TransformerLM& model, const PairDataset& data, int64_t max_pairs,
                           const DecodeOptions& options) {
  const PairTokens tokens = *data.pair_tokens();
  BleuReport report;
  for (const TokenPair& pair : data.validation_pairs(max_pairs)) {
    report.sources.push_back(pair_text(data, pair.source));
    report.references.push_back(pair_text(data, pair.target));
    report.hypotheses.push_back(pair_text(data, translate(model, pair.source, tokens, options)));
  }
  report.bleu = corpus_bleu(report.hypotheses, report.references);
  return report;
}

}  // namespace normlab
