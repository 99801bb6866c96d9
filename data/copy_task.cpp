// The synthetic copy task (Xiong et al. 2020 reproduction, warmup study): a sequence is
//   x_1 .. x_L  SEP  x_1 .. x_L        x_i uniform over the symbols 0 .. V-2, SEP = V-1
// inputs = seq[0 : 2L], targets = seq[1 : 2L + 1]; the first L targets (predicting the random x,
// which cannot be learned, and SEP) are -1, so the loss counts exactly the L copied tokens.
// Chance level of that loss is ln(V - 1).
#include <limits>

#include "core/error.h"
#include "data/dataset.h"

namespace normlab {

namespace {

class CopyTask final : public Dataset {
 public:
  CopyTask(int64_t length, int64_t vocab)
      : length_(length), vocab_(vocab), context_(checked_mul(2, length, "copy_task", "2 * copy_length")) {}

  int64_t vocab_size() const override { return vocab_; }
  const Tokenizer* tokenizer() const override { return nullptr; }

  Batch sample(bool /*validation: same distribution*/, int64_t batch, int64_t context,
               Generator& gen) const override {
    NL_CHECK(context == context_, "copy_task",
             "context must be 2 * copy_length = {} (copy_length {}), got context {}", context_, length_,
             context);
    NL_CHECK(batch >= 1, "copy_task", "batch must be >= 1, got {}", batch);
    const auto separator = static_cast<int32_t>(vocab_ - 1);
    Batch out = empty_batch(batch, context, "copy_task");
    int32_t* inputs = out.inputs.data<int32_t>();
    int32_t* targets = out.targets.data<int32_t>();
    std::vector<int32_t> seq(static_cast<size_t>(context_ + 1));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < length_; ++i) {
        seq[i] = static_cast<int32_t>(gen.below(static_cast<uint64_t>(vocab_ - 1)));
        seq[length_ + 1 + i] = seq[i];
      }
      seq[length_] = separator;
      for (int64_t t = 0; t < context; ++t) {
        inputs[b * context + t] = seq[t];
        targets[b * context + t] = t < length_ ? -1 : seq[t + 1];
      }
    }
    return out;
  }

 private:
  int64_t length_, vocab_;
  int64_t context_;  // 2 * length_: the sequence without its last token
};

}  // namespace

std::unique_ptr<Dataset> make_copy_task(int64_t copy_length, int64_t copy_vocab) {
  NL_CHECK(copy_length >= 1, "copy_task", "copy_length must be >= 1, got {}", copy_length);
  NL_CHECK(copy_vocab >= 3, "copy_task",
           "copy_vocab must be >= 3 (at least two symbols and the separator), got {}", copy_vocab);
  NL_CHECK(copy_vocab <= std::numeric_limits<int32_t>::max(), "copy_task",
           "copy_vocab must be <= 2^31 - 1 (token ids are int32), got {}", copy_vocab);
  return std::make_unique<CopyTask>(copy_length, copy_vocab);
}

}  // namespace normlab
