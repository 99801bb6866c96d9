#include "experiments/checkpoint.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "experiments/atomic_file.h"
#include "experiments/safetensors.h"

namespace fs = std::filesystem;

namespace normlab {

namespace {

fs::path checkpoint_dir(const std::string& run_dir) { return fs::path(run_dir) / "checkpoint"; }

std::vector<std::pair<std::string, Tensor>> model_tensors(const TransformerLM& model) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [name, p] : model.named_parameters()) out.emplace_back(name, p.value());
  for (const auto& [name, b] : model.named_buffers()) out.emplace_back("buffer." + name, b);
  return out;
}

// Copies every stored tensor into the model's own (shapes must match; nothing may be missing).
void restore_model(const SafetensorsFile& file, TransformerLM& model) {
  auto restore = [&](const std::string& key, Tensor target) {
    if (!file.contains(key)) fail("checkpoint", "{} has no tensor '{}'", file.path, key);
    const Tensor& saved = file.get(key);
    if (saved.shape() != target.shape())
      fail("checkpoint", "{}: '{}' has shape {} but the model's is {}", file.path, key,
           shape_str(saved.shape()), shape_str(target.shape()));
    target.copy_(saved);
  };
  for (auto& [name, p] : model.named_parameters()) restore(name, p.value());
  for (auto& [name, b] : model.named_buffers()) restore("buffer." + name, b);
}

}  // namespace

void save_checkpoint(const std::string& run_dir, const TransformerLM& model, const Optimizer& optimizer,
                     const Generator& data_gen, int64_t step) {
  const fs::path dir = checkpoint_dir(run_dir);
  fs::create_directories(dir);
  const std::string step_text = std::to_string(step);
  save_safetensors((dir / "model.safetensors").string(), model_tensors(model), {{"step", step_text}});
  save_safetensors((dir / "optimizer.safetensors").string(), optimizer.state(),
                   {{"step", step_text}, {"optimizer_steps", std::to_string(optimizer.step_count())}});
  const auto state = data_gen.state();
  nlohmann::json trainer = {{"step", step},
                            {"data_generator", std::vector<uint64_t>(state.begin(), state.end())}};
  write_file_atomic((dir / "trainer_state.json").string(), trainer.dump(2) + "\n");
}

int64_t load_checkpoint(const std::string& run_dir, TransformerLM& model, Optimizer& optimizer,
                        Generator& data_gen) {
  const fs::path dir = checkpoint_dir(run_dir);
  const fs::path state_path = dir / "trainer_state.json";
  std::ifstream in(state_path);
  if (!in) fail("resume", "{} not found: the run has no complete checkpoint", state_path.string());
  nlohmann::json trainer;
  try {
    trainer = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    fail("resume", "{} is not valid JSON: {}", state_path.string(), e.what());
  }
  const int64_t step = trainer.at("step").get<int64_t>();
  const auto gen_state = trainer.at("data_generator").get<std::vector<uint64_t>>();
  if (gen_state.size() != 6) fail("resume", "{}: data_generator must hold 6 numbers", state_path.string());

  const SafetensorsFile model_file = load_safetensors((dir / "model.safetensors").string());
  const SafetensorsFile optim_file = load_safetensors((dir / "optimizer.safetensors").string());
  for (const auto* f : {&model_file, &optim_file}) {
    auto it = f->metadata.find("step");
    if (it == f->metadata.end() || it->second != std::to_string(step))
      fail("resume", "{} is not from step {} (an interrupted checkpoint write?)", f->path, step);
  }
  restore_model(model_file, model);
  std::vector<std::pair<std::string, Tensor>> state;
  for (const auto& name : optim_file.names) state.emplace_back(name, optim_file.get(name));
  optimizer.load_state(state, std::stoll(optim_file.metadata.at("optimizer_steps")));
  std::array<uint64_t, 6> s{};
  std::copy(gen_state.begin(), gen_state.end(), s.begin());
  data_gen.set_state(s);
  return step;
}

void load_model_weights(const std::string& run_dir, TransformerLM& model) {
  restore_model(load_safetensors((checkpoint_dir(run_dir) / "model.safetensors").string()), model);
}

}  // namespace normlab
