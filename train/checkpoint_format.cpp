#include "train/checkpoint_format.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/random.h"

namespace normlab {
namespace {

using nlohmann::json;

constexpr const char* kFormatName = "normlab checkpoint";
constexpr uint64_t kMaxStep = uint64_t(1) << 53;  // exact in every JSON reader

template <typename... Args>
[[noreturn]] void malformed(const std::string& path, fmt::format_string<Args...> format, Args&&... args) {
  fail("checkpoint", "{}: {}", path, fmt::format(format, std::forward<Args>(args)...));
}

json parse_object(const std::string& text, const std::string& path) {
  json value;
  try {
    value = json::parse(text);
  } catch (const json::exception& e) {
    malformed(path, "not valid JSON: {}", e.what());
  }
  if (!value.is_object()) malformed(path, "not a JSON object");
  return value;
}

// Every key of `object` must be one of `allowed` and every one of `allowed` must be present.
void check_keys(const json& object, std::initializer_list<const char*> allowed, const std::string& path,
                const std::string& where) {
  for (const auto& [key, _] : object.items()) {
    bool known = false;
    for (const char* name : allowed) known = known || key == name;
    if (!known) malformed(path, "{}unexpected key \"{}\"", where, key);
  }
  for (const char* name : allowed)
    if (!object.contains(name)) malformed(path, "{}missing key \"{}\"", where, name);
}

uint64_t unsigned_value(const json& value, uint64_t max, const std::string& path, const std::string& key) {
  if (!value.is_number_unsigned() || value.get<uint64_t>() > max)
    malformed(path, "\"{}\" must be an integer in [0, {}], got {}", key, max, value.dump());
  return value.get<uint64_t>();
}

uint32_t parse_crc(const json& value, const std::string& path, const std::string& file) {
  const std::string text = value.is_string() ? value.get<std::string>() : "";
  const bool hex = text.size() == 8 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
  if (!hex) malformed(path, "files.\"{}\".crc32 must be 8 lowercase hex digits, got {}", file, value.dump());
  return static_cast<uint32_t>(std::stoul(text, nullptr, 16));
}

}  // namespace

std::string manifest_to_json(const CheckpointManifest& manifest) {
  json files = json::object();
  for (const auto& [name, digest] : manifest.files)
    files[name] = {{"bytes", digest.bytes}, {"crc32", fmt::format("{:08x}", digest.crc32)}};
  const json out = {{"format", kFormatName}, {"version", kCheckpointVersion},
                    {"step", manifest.step}, {"files", files}};
  return out.dump(2) + "\n";
}

CheckpointManifest parse_manifest(const std::string& text, const std::string& path) {
  const json root = parse_object(text, path);
  check_keys(root, {"format", "version", "step", "files"}, path, "");
  if (root["format"] != kFormatName)
    malformed(path, "\"format\" is {}, not \"{}\"", root["format"].dump(), kFormatName);
  if (root["version"] != kCheckpointVersion)
    malformed(path, "checkpoint format version {} (this normlab reads version {})", root["version"].dump(),
              kCheckpointVersion);
  CheckpointManifest manifest;
  manifest.step = static_cast<int64_t>(unsigned_value(root["step"], kMaxStep, path, "step"));
  const json& files = root["files"];
  if (!files.is_object()) malformed(path, "\"files\" is not a JSON object");
  using namespace checkpoint_files;
  check_keys(files, {kModel, kOptimizer, kTrainerState}, path, "files: ");
  for (const auto& [name, entry] : files.items()) {
    if (!entry.is_object()) malformed(path, "files.\"{}\" is not a JSON object", name);
    check_keys(entry, {"bytes", "crc32"}, path, "files.\"" + name + "\": ");
    manifest.files[name] = {unsigned_value(entry["bytes"], kMaxStep, path, name + ".bytes"),
                            parse_crc(entry["crc32"], path, name)};
  }
  return manifest;
}

std::string trainer_state_to_json(const TrainerState& state) {
  json out = {{"step", state.step}, {"data_generator", state.data_generator}};
  if (state.loss_scale)
    out["loss_scale"] = {{"scale", state.loss_scale->scale},
                         {"clean_steps", state.loss_scale->clean_steps},
                         {"skipped_steps", state.loss_scale->skipped_steps}};
  return out.dump(2) + "\n";
}

// trainer_state.json's optional "loss_scale" object: {"scale": > 0, "clean_steps", "skipped_steps"}.
static std::optional<LossScaleState> parse_loss_scale(const json& root, const std::string& path) {
  if (!root.contains("loss_scale")) return std::nullopt;
  const json& o = root["loss_scale"];
  if (!o.is_object()) malformed(path, "\"loss_scale\" must be an object");
  check_keys(o, {"scale", "clean_steps", "skipped_steps"}, path, "loss_scale: ");
  LossScaleState state;
  if (!o["scale"].is_number() || !(o["scale"].get<double>() > 0) || !std::isfinite(o["scale"].get<double>()))
    malformed(path, "\"loss_scale.scale\" must be a positive finite number, got {}", o["scale"].dump());
  state.scale = o["scale"].get<double>();
  state.clean_steps = static_cast<int64_t>(unsigned_value(o["clean_steps"], kMaxStep, path, "loss_scale.clean_steps"));
  state.skipped_steps =
      static_cast<int64_t>(unsigned_value(o["skipped_steps"], kMaxStep, path, "loss_scale.skipped_steps"));
  return state;
}

TrainerState parse_trainer_state(const std::string& text, const std::string& path) {
  json root = parse_object(text, path);
  const std::optional<LossScaleState> loss_scale = parse_loss_scale(root, path);
  root.erase("loss_scale");  // optional: written by fp16 runs only
  check_keys(root, {"step", "data_generator"}, path, "");
  TrainerState state;
  state.step = static_cast<int64_t>(unsigned_value(root["step"], kMaxStep, path, "step"));
  const json& words = root["data_generator"];
  if (!words.is_array() || words.size() != state.data_generator.size())
    malformed(path, "\"data_generator\" must be an array of {} numbers", state.data_generator.size());
  for (size_t i = 0; i < words.size(); ++i)
    state.data_generator[i] = unsigned_value(words[i], UINT64_MAX, path, fmt::format("data_generator[{}]", i));
  if (!Generator::is_valid_state(state.data_generator))
    malformed(path, "\"data_generator\" is not a valid generator state (all-zero words, a flag other than "
              "0/1, or a non-finite spare): the file is damaged");
  state.loss_scale = loss_scale;
  return state;
}

int64_t parse_step_text(const std::string& text, const std::string& path, const std::string& key) {
  const bool digits = !text.empty() && text.size() <= 16 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoull(text) > kMaxStep)
    malformed(path, "metadata \"{}\" must be a step count, got \"{}\"", key, text);
  return static_cast<int64_t>(std::stoull(text));
}

}  // namespace normlab
