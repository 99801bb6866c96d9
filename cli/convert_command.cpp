// normlab convert SRC DST [--dtype float32|float64] [--model-type TYPE]
// A Hugging Face checkpoint directory (config.json + model.safetensors) to a normlab run directory,
// or a run directory (config.toml + checkpoint) to a Hugging Face directory; the direction follows
// from what SRC holds (hf/hf_convert.h).
#include <fmt/core.h>

#include <filesystem>

#include "cli/commands.h"
#include "core/error.h"
#include "hf/hf_convert.h"

namespace normlab::cli {

CLI::App* add_convert_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("convert", "Convert a Hugging Face checkpoint to a normlab run directory or back");
  auto src = std::make_shared<std::string>();
  auto dst = std::make_shared<std::string>();
  auto dtype = std::make_shared<std::string>("float32");
  auto model_type = std::make_shared<std::string>();
  cmd->add_option("src", *src, "HF directory (config.json) or run directory (config.toml)")->required();
  cmd->add_option("dst", *dst, "directory to write")->required();
  cmd->add_option("--dtype", *dtype, "HF -> run: parameter dtype")->check(CLI::IsMember(enum_names<ParamDType>()));
  cmd->add_option("--model-type", *model_type,
                  "run -> HF: openai-gpt, gpt2, llama, mistral, gemma or mixtral (default: from the preset or the structure)");
  cmd->callback([=, &exit_code] {
    namespace fs = std::filesystem;
    const fs::path from(*src);
    if (fs::exists(from / "config.json")) {
      const std::string type = convert_hf_to_run(*src, *dst, enum_value<ParamDType>(*dtype, "convert"));
      fmt::print("{} ({}) -> normlab run {}\n", *src, type, *dst);
    } else if (fs::exists(from / "config.toml")) {
      const std::string type = convert_run_to_hf(*src, *dst, *model_type);
      fmt::print("normlab run {} -> {} ({})\n", *src, *dst, type);
    } else {
      fail("convert", "{} holds neither config.json (a Hugging Face checkpoint) nor config.toml (a normlab run)",
           *src);
    }
    exit_code = 0;
  });
  return cmd;
}

}  // namespace normlab::cli
