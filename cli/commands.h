// Each subcommand of `normlab` lives in its own file and adds itself to the app here.
#pragma once
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <string>

#include "core/error.h"

namespace normlab::cli {

// A command line that cannot work (a missing argument, a value out of range): main() prints it
// with a hint and exits 2 (sweep/exit_codes.h). Errors found while running stay normlab::Error (exit 1).
struct UsageError : Error {
  using Error::Error;
};

template <typename... Args>
[[noreturn]] void usage_error(std::string_view command, fmt::format_string<Args...> format, Args&&... args) {
  throw UsageError(fmt::format("[{}] {}", command, fmt::format(format, std::forward<Args>(args)...)));
}

// `normlab --version`: version, git commit, build type, BLAS, CUDA (version.cpp).
std::string version_text();

// Each returns the subcommand; its callback sets `exit_code`.
CLI::App* add_gradcheck_command(CLI::App& app, int& exit_code);
CLI::App* add_train_command(CLI::App& app, int& exit_code);
CLI::App* add_grads_command(CLI::App& app, int& exit_code);
CLI::App* add_sample_command(CLI::App& app, int& exit_code);
CLI::App* add_plot_command(CLI::App& app, int& exit_code);
// `normlab bench train CONFIG ...`: step timing, op-family breakdown, loss replay (bench_command.cpp).
CLI::App* add_bench_command(CLI::App& app, int& exit_code);
// `normlab sweep CONFIG key=v1,v2 ...`: a grid of runs as child processes (sweep_command.cpp).
CLI::App* add_sweep_command(CLI::App& app, int& exit_code);
// `normlab convert SRC DST`: Hugging Face checkpoint <-> normlab run directory (convert_command.cpp).
CLI::App* add_convert_command(CLI::App& app, int& exit_code);
// `normlab reproduce xiong [--quick] [--jobs N] [--out DIR] [--only E1,...]`: the paper's suite
// and its report (reproduce_command.cpp, xiong/).
CLI::App* add_reproduce_command(CLI::App& app, int& exit_code);
// `normlab baseline CONFIG [--orders 0,1,2,3]`: order-k Markov baselines of the config's text
// (baseline_command.cpp, data/markov.h).
CLI::App* add_baseline_command(CLI::App& app, int& exit_code);
// `normlab bleu HYP REF [REF ...] [--json]`: corpus BLEU, chrF and chrF++ of files with sacreBLEU's
// signatures (bleu_command.cpp, data/bleu.h, data/chrf.h).
CLI::App* add_bleu_command(CLI::App& app, int& exit_code);
// `normlab config [CONFIG] [--explain [KEY|SECTION]] [--markdown]`: the config keys explained, a
// config resolved, docs/config.md (config_command.cpp).
CLI::App* add_config_command(CLI::App& app, int& exit_code);
// `normlab demo half-rmsnorm`: the float16 overflow of a naive RMSNorm vs the fused kernel
// (demo_command.cpp).
CLI::App* add_demo_command(CLI::App& app, int& exit_code);
// `normlab data bible --out DIR`: the Spanish-English Bible translation corpus (data_command.cpp).
CLI::App* add_data_command(CLI::App& app, int& exit_code);

}  // namespace normlab::cli
