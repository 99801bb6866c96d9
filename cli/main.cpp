// normlab: train and dissect small transformers with a hand-written autograd.
#include <fmt/core.h>

#include <new>
#include <string_view>

#include "cli/commands.h"
#include "core/cpu/blas_core.h"
#include "core/error.h"
#include "sweep/child_process.h"
#include "dist/communicator.h"
#include "sweep/exit_codes.h"
#include "sweep/sweep.h"

namespace {

namespace exit_codes = normlab::exit_codes;

void add_commands(CLI::App& app, int& exit_code) {
  normlab::cli::add_gradcheck_command(app, exit_code);
  normlab::cli::add_train_command(app, exit_code);
  normlab::cli::add_config_command(app, exit_code);
  normlab::cli::add_grads_command(app, exit_code);
  normlab::cli::add_sample_command(app, exit_code);
  normlab::cli::add_plot_command(app, exit_code);
  normlab::cli::add_bench_command(app, exit_code);
  normlab::cli::add_sweep_command(app, exit_code);
  normlab::cli::add_reproduce_command(app, exit_code);
  normlab::cli::add_convert_command(app, exit_code);
  normlab::cli::add_demo_command(app, exit_code);
  normlab::cli::add_baseline_command(app, exit_code);
  normlab::cli::add_bleu_command(app, exit_code);
  normlab::cli::add_data_command(app, exit_code);
}

// Parses the command line and runs the subcommand; every outcome becomes one of our exit codes
// (sweep/exit_codes.h), never CLI11's own (105, 106, ...).
int run(CLI::App& app, int argc, char** argv, const int& exit_code) {
  try {
    app.parse(argc, argv);
    return exit_code;
  } catch (const CLI::ParseError& e) {
    // --help and --version print to stdout and are not errors; anything else is a usage error,
    // printed with a hint to run --help.
    return app.exit(e) == 0 ? exit_codes::kDone : exit_codes::kUsage;
  } catch (const normlab::cli::UsageError& e) {
    fmt::print(stderr, "error: {}\nRun with --help for more information.\n", e.what());
    return exit_codes::kUsage;
  } catch (const normlab::Interrupted& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return exit_codes::kSignalBase + e.signal_number;
  } catch (const std::bad_alloc& e) {  // an allocation outside tensors (those throw OutOfMemory)
    fmt::print(stderr, "error: out of memory (std::bad_alloc outside a tensor allocation): lower "
                       "train.batch_size, train.context or the model's size\n");
    return exit_codes::kFailed;
  } catch (const std::exception& e) {  // normlab::Error and the rest: found while running
    fmt::print(stderr, "error: {}\n", e.what());
    return exit_codes::kFailed;
  }
}

}  // namespace

int main(int argc, char** argv) {
  normlab::restart_with_better_blas_core(argv);  // before any thread or file is opened
  normlab::declare_normlab_cli();                 // sweeps may run their points with this executable
  // Only `train` runs data parallel; any other command started N times would repeat its work N times.
  if (normlab::launcher_process_count() > 1 && (argc < 2 || std::string_view(argv[1]) != "train")) {
    fmt::print(stderr, "error: [mpi] only `normlab train` runs under an MPI launcher (started with {} "
                       "processes); for sweeps use one job per point (scripts/slurm_sweep.sh)\n",
               normlab::launcher_process_count());
    return exit_codes::kUsage;
  }
  CLI::App app{"normlab: where and which normalization a transformer needs", "normlab"};
  app.set_version_flag("--version", normlab::cli::version_text,
                       "Print the version, git commit, build type, BLAS and CUDA, and exit");
  app.footer(exit_codes::kHelpText);
  app.require_subcommand(1);
  int exit_code = exit_codes::kDone;
  add_commands(app, exit_code);
  if (argc <= 1) {  // a bare `normlab` asks what it can do: the help, exit 0
    fmt::print("{}", app.help());
    return exit_codes::kDone;
  }
  return run(app, argc, argv, exit_code);
}
