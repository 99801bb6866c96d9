// normlab: train and dissect small transformers with a hand-written autograd.
#include <fmt/core.h>

#include <new>
#include <string_view>

#include "cli/commands.h"
#include "core/cpu/blas_core.h"
#include "core/error.h"
#include "experiments/child_process.h"
#include "experiments/communicator.h"

int main(int argc, char** argv) {
  normlab::restart_with_better_blas_core(argv);  // before any thread or file is opened
  // Only `train` runs data parallel; any other command started N times would repeat its work N times.
  if (normlab::launcher_process_count() > 1 && (argc < 2 || std::string_view(argv[1]) != "train")) {
    fmt::print(stderr, "error: [mpi] only `normlab train` runs under an MPI launcher (started with {} "
                       "processes); for sweeps use one job per point (scripts/slurm_sweep.sh)\n",
               normlab::launcher_process_count());
    return 2;
  }
  CLI::App app{"normlab: where and which normalization a transformer needs"};
  app.require_subcommand(1);
  int exit_code = 0;
  normlab::cli::add_gradcheck_command(app, exit_code);
  normlab::cli::add_train_command(app, exit_code);
  normlab::cli::add_grads_command(app, exit_code);
  normlab::cli::add_sample_command(app, exit_code);
  normlab::cli::add_plot_command(app, exit_code);
  normlab::cli::add_bench_command(app, exit_code);
  normlab::cli::add_sweep_command(app, exit_code);
  normlab::cli::add_reproduce_command(app, exit_code);
  // Exit codes: 0 done; 1 a check or some run failed (gradcheck, sweep); 2 an error (bad input,
  // usage, I/O, a run directory in use); 3 a run diverged with train.fail_on_divergence;
  // 128 + N stopped by signal N (a sweep forwards it to its runs first).
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help is not an error
  } catch (const normlab::Interrupted& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 128 + e.signal_number;
  } catch (const normlab::Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const std::bad_alloc& e) {  // an allocation outside tensors (those throw OutOfMemory)
    fmt::print(stderr, "error: out of memory (std::bad_alloc outside a tensor allocation): lower "
                       "train.batch_size, train.context or the model's size\n");
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
  return exit_code;
}
