#include "xiong/probes_seq2seq.h"

#include <cmath>
#include <string>

#include "autograd/tape.h"
#include "core/error.h"
#include "core/ops.h"
#include "nn/transformer.h"

namespace normlab::xiong {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Gradient sums over batches for one stack's "<stack>.N.ffn.w1.weight" and "...w2.weight".
struct StackSums {
  std::vector<Tensor> w1, w2;
  void add(const std::string& name, const std::string& stack, const Tensor& grad) {
    const std::string prefix = stack + ".";
    if (name.rfind(prefix, 0) != 0) return;
    const size_t dot = name.find('.', prefix.size());
    const auto l = static_cast<size_t>(std::stoul(name.substr(prefix.size(), dot - prefix.size())));
    std::vector<Tensor>* sums = ends_with(name, ".ffn.w1.weight") ? &w1 : ends_with(name, ".ffn.w2.weight") ? &w2 : nullptr;
    if (!sums) return;
    if (sums->size() <= l) sums->resize(l + 1);
    (*sums)[l] = (*sums)[l].defined() ? ops::add((*sums)[l], grad) : grad.clone();
  }
  StackGrads norms(double batches) const {
    StackGrads out;
    for (const Tensor& t : w1) out.w1_norm_of_mean.push_back(std::sqrt(ops::sum_squares(t)) / batches);
    for (const Tensor& t : w2) out.w2_norm_of_mean.push_back(std::sqrt(ops::sum_squares(t)) / batches);
    return out;
  }
};

}  // namespace

Seq2SeqLayerGrads measure_seq2seq_layer_grads(TransformerLM& model, const std::vector<Batch>& batches) {
  StackSums encoder, decoder;
  for (const Batch& batch : batches) {
    model.zero_grad();
    backward(model.loss(batch.inputs, batch.targets, batch.sources, batch.source_padding));
    for (const auto& [name, p] : model.named_parameters()) {
      if (!p.grad().defined()) continue;
      encoder.add(name, "encoder", p.grad());
      decoder.add(name, "decoder", p.grad());
    }
  }
  const auto n = static_cast<double>(batches.size());
  return {encoder.norms(n), decoder.norms(n)};
}

Seq2SeqLayerGrads measure_seq2seq_layer_grads(const ModelConfig& config, const ProbeBatch& probe, uint64_t data_seed) {
  NL_CHECK(config.arch == ModelArch::EncoderDecoder, "measure_seq2seq_layer_grads",
           "needs model.arch \"encoder_decoder\", got \"{}\"", config.arch);
  TransformerLM model(config);
  const auto targets_batches = probe_batches(config.vocab_size, probe, data_seed);
  const auto source_batches = probe_batches(config.vocab_size, probe, data_seed ^ 0x50c5ull);
  std::vector<Batch> batches;
  for (size_t b = 0; b < targets_batches.size(); ++b)
    batches.push_back({targets_batches[b].first, targets_batches[b].second, source_batches[b].first, Tensor()});
  return measure_seq2seq_layer_grads(model, batches);
}

}  // namespace normlab::xiong
