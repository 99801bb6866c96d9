#include "train/checkpoint.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/files.h"
#include "io/atomic_file.h"
#include "train/checkpoint_format.h"
#include "io/fault_injection.h"
#include "io/safetensors.h"

namespace fs = std::filesystem;

namespace normlab {
namespace {

constexpr const char* kLink = "checkpoint";
constexpr const char* kGenerations = "checkpoints";

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

NamedTensors model_tensors(const TransformerLM& model) {
  NamedTensors out;
  for (const auto& [name, p] : model.named_parameters()) out.emplace_back(name, p.value());
  for (const auto& [name, b] : model.named_buffers()) out.emplace_back("buffer." + name, b);
  return out;
}

// The generation the link names, or an empty path when there is no link yet.
fs::path current_generation(const fs::path& run) {
  const fs::path link = run / kLink;
  const fs::file_status status = fs::symlink_status(link);
  if (!fs::exists(status)) return {};
  NL_CHECK(!fs::is_directory(status), "checkpoint",
           "{} is a directory: a checkpoint from a normlab before checkpoint format {} (without a "
           "manifest, it cannot be verified); train the run again", link.string(), kCheckpointVersion);
  NL_CHECK(fs::is_symlink(status), "checkpoint", "{} is not a symbolic link", link.string());
  const fs::path target = fs::read_symlink(link);
  const std::string name = target.filename().string();
  NL_CHECK(target.parent_path() == kGenerations && !name.empty() && name != "." && name != "..",
           "checkpoint", "{} points to '{}', not into {}/", link.string(), target.string(), kGenerations);
  return run / target;
}

// ---- saving ----

// A fresh, empty generation directory checkpoints/step-<step>.XXXXXX (unique even for a step saved
// twice); its files are written by the caller.
fs::path new_generation(const fs::path& run, int64_t step) {
  const fs::path parent = run / kGenerations;
  std::error_code error;
  if (fs::create_directory(parent, error)) sync_directory(run.string());
  NL_CHECK(!error, "checkpoint", "cannot create '{}': {}", parent.string(), error.message());
  std::string pattern = (parent / fmt::format("step-{:08d}.XXXXXX", step)).string();
  NL_CHECK(!inject_fault("create", pattern) && ::mkdtemp(pattern.data()) != nullptr, "checkpoint",
           "cannot create a directory in '{}': {}", parent.string(), std::strerror(errno));
  fs::permissions(pattern, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec, error);
  return pattern;
}

void write_generation(const fs::path& gen, const TransformerLM& model, const Optimizer& optimizer,
                      const Generator& data_gen, int64_t step, const LossScaler* loss_scaler) {
  using namespace checkpoint_files;
  const std::string step_text = std::to_string(step);
  CheckpointManifest manifest;
  manifest.step = step;
  TrainerState trainer_state{step, data_gen.state(), std::nullopt};
  if (loss_scaler != nullptr && loss_scaler->enabled()) trainer_state.loss_scale = loss_scaler->state();
  manifest.files[kModel] = save_safetensors((gen / kModel).string(), model_tensors(model), {{"step", step_text}});
  manifest.files[kOptimizer] =
      save_safetensors((gen / kOptimizer).string(), optimizer.state(),
                       {{"step", step_text}, {"optimizer_steps", std::to_string(optimizer.step_count())}});
  manifest.files[kTrainerState] =
      write_file_atomic((gen / kTrainerState).string(), trainer_state_to_json(trainer_state));
  write_file_atomic((gen / kManifest).string(), manifest_to_json(manifest));  // fsyncs `gen` too
  sync_directory(gen.parent_path().string());                                // gen's own entry
}

// Points the link at `gen` with one rename(2) of a new link over the old one.
void switch_link(const fs::path& run, const fs::path& gen) {
  const std::string temp_link = (run / (std::string(kLink) + ".tmp." + gen.extension().string().substr(1))).string();
  const std::string target = (fs::path(kGenerations) / gen.filename()).string();
  ::unlink(temp_link.c_str());
  NL_CHECK(!inject_fault("symlink", temp_link) && ::symlink(target.c_str(), temp_link.c_str()) == 0,
           "checkpoint", "cannot create the link '{}': {}", temp_link, std::strerror(errno));
  const std::string link = (run / kLink).string();
  if (inject_fault("rename", link) || ::rename(temp_link.c_str(), link.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp_link.c_str());
    fail("checkpoint", "renaming '{}' to '{}' failed: {}", temp_link, link, std::strerror(error));
  }
}

void remove_generation(const fs::path& gen) {
  std::error_code ignored;  // a leftover is removed at the next start
  if (!inject_fault("remove", gen.string())) fs::remove_all(gen, ignored);
}

// ---- loading ----

// A generation read into memory and checked against its manifest; nothing applied yet.
struct VerifiedGeneration {
  fs::path dir;
  CheckpointManifest manifest;
  std::map<std::string, std::string> bytes;  // file name -> content, size and CRC-32 checked
  std::string path(const std::string& file) const { return (dir / file).string(); }
};

VerifiedGeneration read_generation(const fs::path& run, std::initializer_list<const char*> files) {
  VerifiedGeneration out;
  out.dir = current_generation(run);
  NL_CHECK(!out.dir.empty(), "checkpoint",
           "{} does not exist: the run stopped before its first checkpoint; start it again",
           (run / kLink).string());
  const std::string manifest_path = out.path(checkpoint_files::kManifest);
  out.manifest = parse_manifest(read_whole_file(manifest_path, "checkpoint"), manifest_path);
  for (const char* file : files) {
    const std::string path = out.path(file);
    std::string bytes = read_whole_file(path, "checkpoint");
    const FileDigest want = out.manifest.files.at(file), got = digest_of(bytes);
    NL_CHECK(got.bytes == want.bytes && got.crc32 == want.crc32, "checkpoint",
             "{} is damaged: {} bytes with CRC-32 {:08x}, but {} lists {} bytes with CRC-32 {:08x}", path,
             got.bytes, got.crc32, manifest_path, want.bytes, want.crc32);
    out.bytes[file] = std::move(bytes);
  }
  return out;
}

std::vector<TensorSpec> specs_of(const NamedTensors& tensors) {
  std::vector<TensorSpec> specs;
  for (const auto& [name, t] : tensors) specs.push_back({name, t.dtype(), t.shape()});
  return specs;
}

// The model file, checked: its step and exactly the model's tensors, dtypes and shapes.
SafetensorsFile checked_model_file(const VerifiedGeneration& v, const TransformerLM& model) {
  const std::string path = v.path(checkpoint_files::kModel);
  SafetensorsFile file = parse_safetensors(path, v.bytes.at(checkpoint_files::kModel));
  const std::string step = file.metadata.count("step") ? file.metadata.at("step") : "";
  NL_CHECK(parse_step_text(step, path, "step") == v.manifest.step, "checkpoint",
           "{} is from step {}, the manifest from step {}", path, step, v.manifest.step);
  check_tensors(file, specs_of(model_tensors(model)), "", "checkpoint");
  return file;
}

void copy_into_model(const SafetensorsFile& file, TransformerLM& model) {
  for (auto& [name, target] : model_tensors(model)) target.copy_(file.tensors.at(name));
}

}  // namespace

void save_checkpoint(const std::string& run_dir, const TransformerLM& model, const Optimizer& optimizer,
                     const Generator& data_gen, int64_t step, const LossScaler* loss_scaler) {
  const fs::path run(run_dir);
  const fs::path previous = current_generation(run);  // also refuses an old-format checkpoint/
  fs::path gen;
  bool switched = false;
  try {
    gen = new_generation(run, step);
    write_generation(gen, model, optimizer, data_gen, step, loss_scaler);
    switch_link(run, gen);
    switched = true;
  } catch (const Error& e) {
    if (!gen.empty() && !switched) remove_generation(gen);
    if (previous.empty()) fail("checkpoint", "step {} was not saved ({}); the run has no checkpoint yet", step, e.what());
    fail("checkpoint", "step {} was not saved ({}); {} still names the previous checkpoint, from which "
         "`normlab train --resume {}` continues", step, e.what(), (run / kLink).string(), run_dir);
  }
  sync_directory(run.string());  // makes the switch durable
  if (!previous.empty()) remove_generation(previous);
}

int64_t load_checkpoint(const std::string& run_dir, TransformerLM& model, Optimizer& optimizer,
                        Generator& data_gen, LossScaler* loss_scaler) {
  using namespace checkpoint_files;
  const VerifiedGeneration v = read_generation(run_dir, {kModel, kOptimizer, kTrainerState});
  const int64_t step = v.manifest.step;
  const std::string state_path = v.path(kTrainerState), optim_path = v.path(kOptimizer);
  const TrainerState trainer = parse_trainer_state(v.bytes.at(kTrainerState), state_path);
  NL_CHECK(trainer.step == step, "checkpoint", "{} is from step {}, the manifest from step {}", state_path,
           trainer.step, step);
  const SafetensorsFile model_file = checked_model_file(v, model);
  const SafetensorsFile optim_file = parse_safetensors(optim_path, v.bytes.at(kOptimizer));
  // The optimizer updated at every step but those an fp16 run skipped for overflowing gradients.
  const int64_t skipped = trainer.loss_scale ? trainer.loss_scale->skipped_steps : 0;
  NL_CHECK(skipped <= step, "checkpoint", "{}: {} skipped steps in {} steps", state_path, skipped, step);
  for (const auto& [key, expected] : {std::pair{"step", step}, {"optimizer_steps", step - skipped}}) {
    const std::string text = optim_file.metadata.count(key) ? optim_file.metadata.at(key) : "";
    NL_CHECK(parse_step_text(text, optim_path, key) == expected, "checkpoint",
             "{}: metadata \"{}\" is {}, expected {} (the manifest's step {}, {} skipped)", optim_path, key, text,
             expected, step, skipped);
  }
  NamedTensors optim_state;
  for (const auto& name : optim_file.names) optim_state.emplace_back(name, optim_file.tensors.at(name));
  // The optimizer checks its whole state before it replaces any of it; then nothing can fail.
  optimizer.load_state(optim_state, step - skipped);
  copy_into_model(model_file, model);
  data_gen.set_state(trainer.data_generator);
  if (loss_scaler != nullptr && trainer.loss_scale) loss_scaler->set_state(*trainer.loss_scale);
  return step;
}

void load_model_weights(const std::string& run_dir, TransformerLM& model) {
  const VerifiedGeneration v = read_generation(run_dir, {checkpoint_files::kModel});
  copy_into_model(checked_model_file(v, model), model);
}

bool has_checkpoint(const std::string& run_dir) {
  return fs::exists(fs::symlink_status(fs::path(run_dir) / kLink));
}

void remove_stale_checkpoint_files(const std::string& run_dir) {
  const fs::path run(run_dir);
  remove_stale_temporaries(run_dir);
  const fs::path current = current_generation(run);
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(run / kGenerations, error))
    if (entry.path() != current) remove_generation(entry.path());
}

bool checkpoint_due(int64_t steps_done, int64_t every, double seconds_since_last, double max_seconds) {
  return (every > 0 && steps_done % every == 0) || seconds_since_last >= max_seconds;
}

}  // namespace normlab
