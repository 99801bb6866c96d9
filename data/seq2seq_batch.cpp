// The batch layout of sequence-to-sequence data (data/seq2seq.h), shared by the pairs file and
// the synthetic tasks, and the text of a target (for decoding and BLEU).
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "data/seq2seq.h"

namespace normlab {

namespace {

// Lengths of the batch's tensors: S = longest source + 1 (EOS), T = longest target + 1 (BOS in the
// inputs, EOS in the targets). Throws naming the first pair that does not fit in `context`.
std::pair<int64_t, int64_t> batch_lengths(const std::vector<const TokenPair*>& pairs, int64_t context,
                                          const std::function<std::string(size_t)>& where, const char* op) {
  int64_t S = 0, T = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    check_pair_fits(*pairs[i], context, [&] { return where(i); }, op);
    S = std::max(S, static_cast<int64_t>(pairs[i]->source.size()) + 1);
    T = std::max(T, static_cast<int64_t>(pairs[i]->target.size()) + 1);
  }
  return {S, T};
}

}  // namespace

void check_pair_fits(const TokenPair& pair, int64_t context, const std::function<std::string()>& where,
                     const char* op) {
  const auto s = static_cast<int64_t>(pair.source.size()) + 1;
  const auto t = static_cast<int64_t>(pair.target.size()) + 1;
  if (s > context || t > context) {
    fail(op, "the pair at {} does not fit in context {}: source {} tokens + EOS = {}, BOS + target {} tokens = {}",
         where(), context, s - 1, s, t - 1, t);
  }
}

Batch pack_pairs(const std::vector<const TokenPair*>& pairs, const PairTokens& tokens, int64_t context,
                 const std::function<std::string(size_t)>& where, const char* op) {
  NL_CHECK(!pairs.empty(), op, "a batch needs at least one pair");
  const auto [S, T] = batch_lengths(pairs, context, where, op);
  const auto B = static_cast<int64_t>(pairs.size());
  Batch out = empty_batch(B, T, op);
  out.sources = Tensor::empty({B, S}, DType::I32);
  out.source_padding = Tensor::empty({B, S}, DType::I32);
  int32_t* sources = out.sources.data<int32_t>();
  int32_t* padding = out.source_padding.data<int32_t>();
  int32_t* inputs = out.inputs.data<int32_t>();
  int32_t* targets = out.targets.data<int32_t>();
  for (int64_t b = 0; b < B; ++b) {
    const std::vector<int32_t>& src = pairs[b]->source;
    const std::vector<int32_t>& tgt = pairs[b]->target;
    const auto n_src = static_cast<int64_t>(src.size()), n_tgt = static_cast<int64_t>(tgt.size());
    for (int64_t s = 0; s < S; ++s) {
      sources[b * S + s] = s < n_src ? src[s] : s == n_src ? tokens.eos : tokens.pad;
      padding[b * S + s] = s > n_src ? 1 : 0;
    }
    for (int64_t t = 0; t < T; ++t) {
      inputs[b * T + t] = t == 0 ? tokens.bos : t <= n_tgt ? tgt[t - 1] : tokens.pad;
      targets[b * T + t] = t < n_tgt ? tgt[t] : t == n_tgt ? tokens.eos : -1;
    }
  }
  return out;
}

PairTokens pair_tokens_after(int64_t ordinary_vocab, const char* op) {
  NL_CHECK(ordinary_vocab >= 1 && ordinary_vocab <= std::numeric_limits<int32_t>::max() - 3, op,
           "an ordinary vocabulary of {} leaves no int32 ids for PAD, BOS and EOS", ordinary_vocab);
  const auto v0 = static_cast<int32_t>(ordinary_vocab);
  return {v0, v0 + 1, v0 + 2};
}

const PairDataset* as_pair_dataset(const Dataset& data) { return dynamic_cast<const PairDataset*>(&data); }

std::vector<TokenPair> PairDataset::eval_pairs(EvalSplit split, int64_t max_pairs) const {
  return split == EvalSplit::Validation ? validation_pairs(max_pairs) : std::vector<TokenPair>{};
}

std::vector<std::vector<std::string>> PairDataset::eval_references(EvalSplit split, int64_t max_pairs) const {
  std::vector<std::string> targets;
  for (const TokenPair& pair : eval_pairs(split, max_pairs)) targets.push_back(pair_text(*this, pair.target));
  return {targets};
}

std::string render_ids(const std::vector<int32_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ' ';
    out += 'w';
    out += std::to_string(ids[i]);
  }
  return out;
}

std::string pair_text(const PairDataset& data, const std::vector<int32_t>& ids) {
  const PairTokens tokens = *data.pair_tokens();
  std::vector<int32_t> words;
  for (const int32_t id : ids) {
    if (id == tokens.eos) break;
    if (id != tokens.pad && id != tokens.bos) words.push_back(id);
  }
  const Tokenizer* tokenizer = data.tokenizer();
  return tokenizer ? tokenizer->decode(words) : render_ids(words);
}

std::vector<int32_t> pair_ids(const PairDataset& data, const std::string& text) {
  const PairTokens tokens = *data.pair_tokens();
  if (const Tokenizer* tokenizer = data.tokenizer()) return tokenizer->encode(text);
  std::vector<int32_t> ids;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    char* end = nullptr;
    const long id = word.size() > 1 && word[0] == 'w' ? std::strtol(word.c_str() + 1, &end, 10) : -1;
    NL_CHECK(end && *end == '\0' && id >= 0 && id < tokens.pad, "data",
             "'{}' is not a word of this task: words are w0 .. w{}", word, tokens.pad - 1);
    ids.push_back(static_cast<int32_t>(id));
  }
  return ids;
}

}  // namespace normlab
