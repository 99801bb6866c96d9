// Helpers for tests that run the built `normlab` binary and tiny training configs.
#pragma once
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "config/config.h"
#include "config/toml_codec.h"

namespace normlab::test {

inline const std::string kNormlab = NORMLAB_BINARY_DIR "/normlab";

struct CommandResult {
  int exit_code = -1;  // -1: did not exit normally
  std::string output;  // stdout and stderr together
};

// Runs `command` with /bin/sh, stderr merged into stdout.
inline CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// A config that trains in well under a second: the copy task (vocabulary 8, context 8), two
// layers of width 16, six steps, every metric logged. Vary it with load_config overrides.
inline std::string tiny_config_toml(const std::string& out_dir) {
  return "[model]\nd_model = 16\nn_heads = 2\nn_layers = 2\nd_ff = 32\ncontext_length = 8\n"
         "norm_placement = \"pre\"\n"
         "[optim]\nname = \"adam\"\nlr = 1e-2\n"
         "[data]\nsource = \"copy\"\ncopy_length = 4\ncopy_vocab = 8\n"
         "[train]\nname = \"tiny\"\nout_dir = " + toml_quote(out_dir) + "\nsteps = 6\nbatch_size = 4\ncontext = 8\n"
         "threads = 1\n"
         "[log]\nevery = 1\neval_every = 2\neval_batches = 1\ngrad_norm_every = 2\n";
}

}  // namespace normlab::test
