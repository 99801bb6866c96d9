// Masked-language-model batches (BERT, Devlin et al. 2019, section 3.1 and appendix A.1) over any
// dataset: the base dataset draws B windows of T tokens (its inputs; its next-token targets are
// dropped), then per sequence
//   k = max(1, round(mask_prob * T)) positions are selected, a uniform random subset (a partial
//       Fisher-Yates shuffle of 0..T-1),
//   targets[b, t] = the original token at a selected position, -1 elsewhere (cross_entropy ignores
//       it), so [MASK] is never a target,
//   inputs[b, t] at a selected position = [MASK] (id = base vocab) with probability 0.8, a uniform
//       ordinary token (0 .. base vocab - 1, possibly the original) with 0.1, the original with 0.1.
// Every draw comes from `gen` after the base's, in a fixed order, so the same generator state gives
// the same batch and a resumed run the same stream.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.h"
#include "data/dataset.h"

namespace normlab {

namespace {

class MaskedLmDataset final : public Dataset {
 public:
  MaskedLmDataset(std::unique_ptr<Dataset> base, double mask_prob)
      : base_(std::move(base)), mask_prob_(mask_prob), mask_id_(static_cast<int32_t>(base_->vocab_size())) {}

  int64_t vocab_size() const override { return base_->vocab_size() + 1; }  // + [MASK]
  const Tokenizer* tokenizer() const override { return base_->tokenizer(); }

  Batch sample(bool validation, int64_t batch, int64_t context, Generator& gen) const override {
    Batch out = base_->sample(validation, batch, context, gen);  // inputs (B,T): the original text
    int32_t* inputs = out.inputs.data<int32_t>();
    int32_t* targets = out.targets.data<int32_t>();
    std::vector<int64_t> order(static_cast<size_t>(context));
    const int64_t k = masked_per_sequence(context);
    for (int64_t b = 0; b < batch; ++b) {
      int32_t* in = inputs + b * context;
      int32_t* target = targets + b * context;
      std::fill(target, target + context, -1);
      std::iota(order.begin(), order.end(), int64_t{0});
      for (int64_t i = 0; i < k; ++i) {  // order[i]: the i-th selected position
        const int64_t j = i + static_cast<int64_t>(gen.below(static_cast<uint64_t>(context - i)));
        std::swap(order[i], order[j]);
        const int64_t t = order[i];
        target[t] = in[t];
        in[t] = corrupted(in[t], gen);
      }
    }
    return out;
  }

  int64_t masked_per_sequence(int64_t context) const {
    return std::max<int64_t>(1, std::llround(mask_prob_ * static_cast<double>(context)));
  }

 private:
  // BERT's 80/10/10: [MASK], a random ordinary token, or the token itself.
  int32_t corrupted(int32_t original, Generator& gen) const {
    const uint64_t r = gen.below(10);
    if (r < 8) return mask_id_;
    if (r == 8) return static_cast<int32_t>(gen.below(static_cast<uint64_t>(mask_id_)));
    return original;
  }

  std::unique_ptr<Dataset> base_;
  double mask_prob_;
  int32_t mask_id_;
};

}  // namespace

std::unique_ptr<Dataset> make_masked_lm_dataset(std::unique_ptr<Dataset> base, double mask_prob) {
  NL_CHECK(base != nullptr, "masked_lm", "no base dataset");
  NL_CHECK(!base->pair_tokens(), "masked_lm",
           "a sequence-to-sequence dataset cannot be masked (its batches are pairs)");
  NL_CHECK(mask_prob > 0.0 && mask_prob < 1.0, "masked_lm", "mask_prob must be in (0, 1), got {}", mask_prob);
  NL_CHECK(base->vocab_size() < std::numeric_limits<int32_t>::max(), "masked_lm",
           "the base vocabulary ({}) leaves no int32 id for [MASK]", base->vocab_size());
  return std::make_unique<MaskedLmDataset>(std::move(base), mask_prob);
}

std::unique_ptr<Dataset> make_dataset(const DataConfig& config, bool masked_lm) {
  std::unique_ptr<Dataset> data = make_dataset(config);
  return masked_lm ? make_masked_lm_dataset(std::move(data), config.mask_prob) : std::move(data);
}

}  // namespace normlab
