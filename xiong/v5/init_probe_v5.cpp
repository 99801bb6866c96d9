#include "xiong/v5/init_probe_v5.h"

#include <fmt/format.h>

#include "config/config.h"
#include "core/random.h"
#include "io/atomic_file.h"
#include "io/csv.h"
#include "xiong/probes_seq2seq.h"

namespace fs = std::filesystem;

namespace normlab::xiong {

namespace {

// One row per layer and weight of one stack: arm, seed, stack, weight, layer, norm_of_mean.
void append_stack(std::string& text, const std::string& arm, int seed, const char* stack, const StackGrads& grads) {
  for (const auto& [weight, norms] : {std::pair{"w1", &grads.w1_norm_of_mean}, std::pair{"w2", &grads.w2_norm_of_mean}})
    for (size_t l = 0; l < norms->size(); ++l)
      text += csv_line({arm, std::to_string(seed), stack, weight, std::to_string(l + 1), csv_number((*norms)[l])});
}

}  // namespace

void run_init_probe(const RegistrationV5& reg, const std::vector<std::string>& extra_overrides,
                    const std::vector<int>& seeds, const fs::path& csv_path) {
  const std::string config = (fs::path(reg.path).parent_path().parent_path() / reg.base_config).string();
  std::vector<std::string> shared = reg.run_overrides();
  shared.insert(shared.end(), extra_overrides.begin(), extra_overrides.end());
  // The tokenizer and the data do not depend on the arm or the seed: built once.
  const RunConfig data_config = load_config(config, shared);
  const std::unique_ptr<Dataset> data = make_dataset(data_config.data);
  std::string text = csv_line({"arm", "seed", "stack", "weight", "layer", "norm_of_mean"});
  for (const std::string& arm_id : reg.init_probe.arms) {
    std::vector<std::string> overrides = shared;
    const ArmV5& arm = reg.arm(arm_id);
    overrides.insert(overrides.end(), arm.overrides.begin(), arm.overrides.end());
    for (int seed : seeds) {
      std::vector<std::string> with_seed = overrides;
      with_seed.push_back(fmt::format("model.seed={}", seed));
      RunConfig rc = load_config(config, with_seed);
      rc.model.vocab_size = data->vocab_size();
      TransformerLM model(rc.model);
      Generator gen(static_cast<uint64_t>(seed));
      std::vector<Batch> batches;
      for (int64_t b = 0; b < reg.init_probe.batches; ++b)
        batches.push_back(data->sample(false, reg.init_probe.batch_pairs, rc.train.context, gen));
      const Seq2SeqLayerGrads grads = measure_seq2seq_layer_grads(model, batches);
      append_stack(text, arm_id, seed, "encoder", grads.encoder);
      append_stack(text, arm_id, seed, "decoder", grads.decoder);
    }
  }
  write_file_atomic(csv_path.string(), text);
}

}  // namespace normlab::xiong
