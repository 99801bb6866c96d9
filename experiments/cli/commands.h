// Each subcommand of `normlab` lives in its own file and adds itself to the app here.
#pragma once
#include <CLI/CLI.hpp>

namespace normlab::cli {

// Each returns the subcommand; its callback sets `exit_code`.
CLI::App* add_gradcheck_command(CLI::App& app, int& exit_code);
CLI::App* add_train_command(CLI::App& app, int& exit_code);
CLI::App* add_grads_command(CLI::App& app, int& exit_code);
CLI::App* add_sample_command(CLI::App& app, int& exit_code);
CLI::App* add_plot_command(CLI::App& app, int& exit_code);
// `normlab bench train CONFIG ...`: step timing, op-family breakdown, loss replay (bench_command.cpp).
CLI::App* add_bench_command(CLI::App& app, int& exit_code);

}  // namespace normlab::cli
