// Forward statistics for the dynamics log (train/dynamics.h): while an ActivationRecorder is
// installed on this thread, every Norm adds the RMS of its input and every attention layer the
// largest attention logit and the mean attention entropy, each named by the module's scope:
//   "blocks.3.norm1.input_rms"  sqrt(mean(x^2)) of the norm's input, over all its elements
//   "blocks.3.attn.logit_max"   max over (B,H,i,j), j a key row i may see, of q_i.k_j / sqrt(D)
//   "blocks.3.attn.entropy"     mean over (B,H,i) of -sum_j p_ij ln p_ij (nats)
// With no recorder installed, a forward pays one thread-local pointer test per norm and attention.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace normlab {

class ActivationRecorder {
 public:
  ActivationRecorder();   // installs itself on this thread (the previous one is restored after)
  ~ActivationRecorder();
  ActivationRecorder(const ActivationRecorder&) = delete;
  ActivationRecorder& operator=(const ActivationRecorder&) = delete;

  void add(const std::string& name, double value) { values_.emplace_back(name, value); }
  // (name, value) in the order the forward recorded them.
  const std::vector<std::pair<std::string, double>>& values() const { return values_; }

 private:
  std::vector<std::pair<std::string, double>> values_;
  ActivationRecorder* previous_;
};

// The recorder installed on this thread, nullptr when none.
ActivationRecorder* activation_recorder();

// sqrt(mean(x^2)) over all elements, read back to the host.
double host_rms(const Tensor& x);

// Records scope.logit_max and scope.entropy of one attention: scores (B,H,Tq,Tk) before scaling,
// probs = the softmax of scale * scores under the mask (causal: key j <= i, and i - window <= j
// when window > 0; key_padding (B,Tk) int32, 1 = a padded key, which no query sees, or undefined).
void record_attention(ActivationRecorder& recorder, const std::string& scope, const Tensor& scores,
                      const Tensor& probs, double scale, bool causal, int64_t window,
                      const Tensor& key_padding = Tensor());

}  // namespace normlab
