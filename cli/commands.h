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
// `normlab sweep CONFIG key=v1,v2 ...`: a grid of runs as child processes (sweep_command.cpp).
CLI::App* add_sweep_command(CLI::App& app, int& exit_code);
// `normlab convert SRC DST`: Hugging Face checkpoint <-> normlab run directory (convert_command.cpp).
CLI::App* add_convert_command(CLI::App& app, int& exit_code);
// `normlab reproduce xiong [--quick] [--jobs N] [--out DIR] [--only E1,...]`: the paper's suite
// and its report (reproduce_command.cpp, xiong/).
CLI::App* add_reproduce_command(CLI::App& app, int& exit_code);

}  // namespace normlab::cli
