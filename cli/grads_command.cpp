// normlab grads CONFIG.toml [overrides] --out FILE.safetensors
// Builds the model, takes one training batch and writes, for cross-checking in another framework
// (layout in docs/grads_format.md):
//   "param.<name>"  every parameter at initialization      "grad.<name>"  its gradient
//   "inputs", "targets" (int32 (B,T))                       "loss" (float64, shape (1,))
//   encoder-decoders also "sources", "source_padding" (int32 (B,S))
// The loss is what training minimises (TransformerLM::training_loss: label-smoothed when
// model.label_smoothing > 0, with the z-loss and the router's auxiliary loss when set).
#include <fmt/core.h>

#include "cli/commands.h"
#include "config/config.h"
#include "io/safetensors.h"
#include "autograd/tape.h"
#include "nn/transformer.h"

namespace normlab::cli {

CLI::App* add_grads_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("grads", "Dump parameters, one batch, the loss and every gradient at init");
  auto config = std::make_shared<std::string>();
  auto overrides = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("config", *config, "config file")->required()->type_name("CONFIG");
  cmd->add_option("overrides", *overrides, "overrides such as model.n_layers=2")->type_name("KEY=VALUE");
  cmd->add_option("--out", *out, "output .safetensors file")->required()->type_name("FILE");
  cmd->callback([=, &exit_code] {
    RunConfig rc = load_config(*config, *overrides);
    std::unique_ptr<Dataset> data = make_dataset(rc.data, rc.model.arch == ModelArch::Encoder);
    rc.model.vocab_size = data->vocab_size();
    TransformerLM model(rc.model);
    Generator gen(rc.train.seed);
    Batch batch = data->sample(false, rc.train.batch_size, rc.train.context, gen);
    Var loss = model.training_loss(batch.inputs, batch.targets, batch.sources, batch.source_padding);
    backward(loss);
    std::vector<std::pair<std::string, Tensor>> tensors;
    for (const auto& [name, p] : model.named_parameters()) {
      tensors.emplace_back("param." + name, p.value());
      tensors.emplace_back("grad." + name, p.grad().defined() ? p.grad() : Tensor::zeros(p.shape(), p.dtype()));
    }
    tensors.emplace_back("inputs", batch.inputs);
    tensors.emplace_back("targets", batch.targets);
    if (batch.sources.defined()) {
      tensors.emplace_back("sources", batch.sources);
      tensors.emplace_back("source_padding", batch.source_padding);
    }
    tensors.emplace_back("loss", Tensor::from_vector({loss.item()}, {1}, DType::F64));
    save_safetensors(*out, tensors, {{"config", config_to_toml(rc)}, {"loss", fmt::format("{:.17g}", loss.item())}});
    fmt::print("wrote {} ({} parameters, loss {:.6f})\n", *out, model.named_parameters().size(), loss.item());
  });
  return cmd;
}

}  // namespace normlab::cli
