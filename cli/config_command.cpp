// normlab config [CONFIG] [overrides] [--explain [KEY|SECTION]] [--markdown]
//   no flag      the resolved config as TOML (the defaults without CONFIG), as a run would save it
//   --explain    every key (or one section, or one key) with its type, default and description;
//                with CONFIG, the values it resolves to beside the defaults (config/config_docs.h)
//   --markdown   docs/config.md: `normlab config --markdown > docs/config.md`
#include <fmt/core.h>

#include <filesystem>

#include "cli/commands.h"
#include "config/config.h"
#include "config/config_docs.h"
#include "sweep/exit_codes.h"

namespace normlab::cli {

namespace {

struct ConfigArgs {
  std::string config, explain;
  std::vector<std::string> overrides;
  bool markdown = false;
};

// `normlab config --explain x.toml` means the file, not a key named x.toml.
bool names_a_file(const std::string& what) {
  std::error_code error;
  return !what.empty() && what.find(".toml") != std::string::npos && std::filesystem::is_regular_file(what, error);
}

void run_config(ConfigArgs args, bool explain) {
  if (args.markdown) {
    if (explain || !args.config.empty() || !args.overrides.empty())
      usage_error("config", "--markdown prints every key's defaults: give no config, overrides or --explain");
    fmt::print("{}", config_markdown());
    return;
  }
  if (explain && args.config.empty() && names_a_file(args.explain)) std::swap(args.config, args.explain);
  if (!args.config.empty() || !args.overrides.empty()) {
    const RunConfig resolved = load_config(args.config, args.overrides);
    fmt::print("{}", explain ? explain_config(args.explain, &resolved) : config_to_toml(resolved));
    return;
  }
  fmt::print("{}", explain ? explain_config(args.explain) : config_to_toml(RunConfig{}));
}

}  // namespace

CLI::App* add_config_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("config", "Explain the config keys (--explain [KEY|SECTION]), print a config "
                                           "resolved, or docs/config.md (--markdown)");
  auto args = std::make_shared<ConfigArgs>();
  cmd->add_option("config", args->config, "config file (default: no file, the defaults)")->type_name("CONFIG");
  cmd->add_option("overrides", args->overrides, "overrides such as optim.lr=1e-3")->type_name("KEY=VALUE");
  auto* explain = cmd->add_option("--explain", args->explain,
                                  "explain every key, or one SECTION or KEY (type, default, description); with "
                                  "CONFIG, its values beside the defaults")
                      ->expected(0, 1)
                      ->type_name("[KEY|SECTION]");
  cmd->add_flag("--markdown", args->markdown, "print docs/config.md (every section's keys as Markdown tables)");
  cmd->callback([args, explain, &exit_code] {
    run_config(*args, explain->count() > 0);
    exit_code = exit_codes::kDone;
  });
  return cmd;
}

}  // namespace normlab::cli
