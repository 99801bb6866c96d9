// The exit codes of the `normlab` command, in one place: cli/main.cpp returns them, a sweep reads
// its child runs' (sweep_run.cpp), and `normlab --help` and the README list them.
#pragma once

namespace normlab::exit_codes {

inline constexpr int kDone = 0;        // done; a diverged run is a result (0 unless fail_on_divergence)
inline constexpr int kFailed = 1;      // an error while running (bad config, unreadable file, a run
                                       // directory in use, out of memory), a gradcheck that found a
                                       // wrong gradient, a sweep point that failed
inline constexpr int kUsage = 2;       // the command line is wrong: unknown flag, missing argument,
                                       // a value out of range
inline constexpr int kDiverged = 3;    // the run diverged and train.fail_on_divergence = true
inline constexpr int kSignalBase = 128;  // 128 + N: stopped by signal N

// The table above as `normlab --help` prints it.
inline constexpr const char* kHelpText =
    "Exit codes:\n"
    "  0        done (a diverged run is a result: 0 unless train.fail_on_divergence)\n"
    "  1        an error while running (config, files, run directory in use, out of memory),\n"
    "           a gradcheck that failed, a sweep point that failed\n"
    "  2        usage: unknown flag or subcommand, missing or malformed argument\n"
    "  3        the run diverged and train.fail_on_divergence = true\n"
    "  128+N    stopped by signal N (130 SIGINT, 143 SIGTERM)";

}  // namespace normlab::exit_codes
