// What a translation model must beat, scored with the same BLEU (data/bleu.h):
//   copy          the source as the translation (names and numbers survive);
//   word by word  each source word replaced by a target word learned from the training split, in
//                 the source's order; a word never seen in training is copied.
// Words are tokenize_13a's tokens; a source word is looked up lowercased. For a source word s and a
// target word t, with c(s) and c(t) the training pairs whose source holds s (target holds t) and
// c(s, t) those that hold both:
//   WordChoice::MostFrequent  t = argmax c(s, t): the most frequent co-occurring target word (which
//                             for most words is "the": a floor);
//   WordChoice::Dice          t = argmax 2 c(s, t) / (c(s) + c(t)) (Dice's association, so "the"
//                             wins only for the words that go with it), ties to the larger c(s, t).
// Ties left after that go to the target word seen first.
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace normlab {

enum class WordChoice { MostFrequent, Dice };

class WordByWord {
 public:
  // Fitted on training (source, target) texts.
  WordByWord(const std::vector<std::string>& sources, const std::vector<std::string>& targets, WordChoice choice);
  ~WordByWord();
  std::string translate(const std::string& source) const;

 private:
  struct Table;
  std::unique_ptr<Table> table_;
};

}  // namespace normlab
