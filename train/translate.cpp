#include "train/translate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <fmt/format.h>

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

int64_t decode_length_limit(int64_t max_length, int64_t source_tokens, int64_t context_length) {
  const int64_t fairseq = (12 * source_tokens + 9) / 10 + 10;  // ceil(1.2 |s|) + 10
  return std::min(max_length > 0 ? max_length : fairseq, context_length);
}

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
  const Var memory = model.encode(Tensor::from_ints(with_eos, {1, s}).to(device), Tensor());  // (1,S,C)
  DecoderState state = model.start_decoding(memory, Tensor());
  // Every live prefix extends a prefix of the previous step by one token: the state keeps that
  // prefix's row, and the step feeds the new token (BOS at the first step, whose prefix is empty).
  std::map<std::vector<int32_t>, int64_t> previous_rows;
  const NextTokenScorer scorer = [&](const std::vector<std::vector<int32_t>>& prefixes) {
    std::vector<int64_t> parents;
    std::vector<int32_t> newest;
    for (const std::vector<int32_t>& prefix : prefixes) {
      const bool first = prefix.empty();
      const auto parent = first ? previous_rows.end() : previous_rows.find({prefix.begin(), prefix.end() - 1});
      NL_CHECK(first || parent != previous_rows.end(), "translate", "a prefix of {} tokens extends no prefix of the last step",
               prefix.size());
      parents.push_back(first ? 0 : parent->second);
      newest.push_back(first ? tokens.bos : prefix.back());
    }
    state.select_rows(parents);
    const auto n = static_cast<int64_t>(prefixes.size());
    const Tensor logits = model.decode_step(Tensor::from_ints(newest, {n, 1}).to(device), state).value();  // (n,1,V)
    const std::vector<double> all = logits.to_vector();
    const auto v = static_cast<size_t>(logits.size(2));
    std::vector<std::vector<double>> rows;
    previous_rows.clear();
    for (size_t i = 0; i < prefixes.size(); ++i) {
      const auto row = all.begin() + static_cast<std::ptrdiff_t>(i * v);
      rows.push_back(log_softmax({row, row + static_cast<std::ptrdiff_t>(v)}));
      previous_rows[prefixes[i]] = static_cast<int64_t>(i);
    }
    return rows;
  };
  const int64_t max_length =
      decode_length_limit(options.max_length, static_cast<int64_t>(source.size()), config.context_length);
  std::vector<int32_t> best =
      beam_search(scorer, {options.beam_size, max_length, options.length_penalty, tokens.eos}).front().tokens;
  if (!best.empty() && best.back() == tokens.eos) best.pop_back();
  return best;
}

namespace {

// Padded source tokens per batch of greedy decoding (score_split).
constexpr int64_t kGreedyBatchTokens = 4096;

int64_t source_positions(const std::vector<int32_t>& source) { return static_cast<int64_t>(source.size()) + 1; }

// Greedy decoding of one batch of sources (sorted rows, `rows` indices into `sources`).
void decode_greedy_batch(TransformerLM& model, const std::vector<std::vector<int32_t>>& sources,
                         const std::vector<size_t>& rows, const PairTokens& tokens, int64_t max_length,
                         std::vector<std::vector<int32_t>>& out) {
  std::vector<const TokenPair*> pairs;
  std::vector<TokenPair> holders(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    holders[r].source = sources[rows[r]];
    holders[r].target = {};
    pairs.push_back(&holders[r]);
  }
  const int64_t context = model.config().context_length;
  const Batch packed = pack_pairs(pairs, tokens, context, [&](size_t r) { return fmt::format("source {}", rows[r]); },
                                  "translate");
  const Device device = model.parameters().front().value().device();
  const Tensor padding = packed.source_padding.to(device);
  DecoderState state = model.start_decoding(model.encode(packed.sources.to(device), padding), padding);
  std::vector<size_t> live(rows.size());  // the batch rows still decoding, in the state's row order
  std::iota(live.begin(), live.end(), 0);
  std::vector<int32_t> newest(rows.size(), tokens.bos);
  for (int64_t t = 1; !live.empty(); ++t) {
    const auto n = static_cast<int64_t>(live.size());
    const Tensor logits = model.decode_step(Tensor::from_ints(newest, {n, 1}).to(device), state).value();  // (n,1,V)
    const std::vector<double> all = logits.to_vector();
    const auto v = static_cast<size_t>(logits.size(2));
    std::vector<size_t> still_live;
    std::vector<int64_t> kept;
    newest.clear();
    for (size_t i = 0; i < live.size(); ++i) {
      const auto row = all.begin() + static_cast<std::ptrdiff_t>(i * v);
      const auto best = static_cast<int32_t>(std::max_element(row, row + static_cast<std::ptrdiff_t>(v)) - row);
      const size_t r = live[i];
      const int64_t limit = decode_length_limit(max_length, static_cast<int64_t>(sources[rows[r]].size()), context);
      if (best != tokens.eos) out[rows[r]].push_back(best);
      if (best == tokens.eos || t >= limit) continue;  // finished: it leaves the batch
      still_live.push_back(r);
      kept.push_back(static_cast<int64_t>(i));
      newest.push_back(best);
    }
    if (!kept.empty() && kept.size() < live.size()) state.select_rows(kept);
    live = std::move(still_live);
  }
}

}  // namespace

std::vector<std::vector<int32_t>> translate_greedy(TransformerLM& model, const std::vector<std::vector<int32_t>>& sources,
                                                   const PairTokens& tokens, int64_t max_length, int64_t max_tokens) {
  const ModelConfig& config = model.config();
  NL_CHECK(config.arch == ModelArch::EncoderDecoder, "translate", "needs model.arch = \"encoder_decoder\", got \"{}\"",
           config.arch);
  NL_CHECK(max_tokens >= 1, "translate", "max_tokens must be >= 1, got {}", max_tokens);
  NoGradGuard no_grad;
  const EvalModeGuard eval(model);
  std::vector<size_t> order(sources.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sources[a].size() < sources[b].size(); });
  std::vector<std::vector<int32_t>> out(sources.size());
  for (size_t start = 0; start < order.size();) {
    // Rows are sorted by length, so the last one added is the longest: (rows) * (its source + EOS).
    size_t end = start + 1;
    while (end < order.size() && static_cast<int64_t>(end - start + 1) * source_positions(sources[order[end]]) <= max_tokens)
      ++end;
    const std::vector<size_t> rows(order.begin() + static_cast<std::ptrdiff_t>(start),
                                   order.begin() + static_cast<std::ptrdiff_t>(end));
    decode_greedy_batch(model, sources, rows, tokens, max_length, out);
    start = end;
  }
  return out;
}

SplitScore score_split(TransformerLM& model, const PairDataset& data, EvalSplit split, int64_t max_pairs,
                       const DecodeOptions& options) {
  const PairTokens tokens = *data.pair_tokens();
  const std::vector<TokenPair> pairs = data.eval_pairs(split, max_pairs);
  SplitScore score;
  score.references = data.eval_references(split, max_pairs);
  std::vector<std::vector<int32_t>> sources;
  for (const TokenPair& pair : pairs) sources.push_back(pair.source);
  std::vector<std::vector<int32_t>> outputs;
  if (options.beam_size == 1) {
    outputs = translate_greedy(model, sources, tokens, options.max_length, kGreedyBatchTokens);
  } else {
    for (const auto& source : sources) outputs.push_back(translate(model, source, tokens, options));
  }
  for (size_t i = 0; i < pairs.size(); ++i) {
    score.sources.push_back(pair_text(data, sources[i]));
    score.hypotheses.push_back(pair_text(data, outputs[i]));
  }
  NL_CHECK(!pairs.empty(), "translate", "the {} split has no pairs to score", split == EvalSplit::Test ? "test" : "validation");
  score.bleu = corpus_bleu_score(score.hypotheses, score.references);
  score.chrf = corpus_chrf(score.hypotheses, score.references);
  return score;
}

}  // namespace normlab
