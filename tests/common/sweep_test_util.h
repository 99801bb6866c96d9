// A sweep over the tiny config (command_util.h) run by the built normlab binary.
#pragma once
#include <string>

#include "command_util.h"
#include "sweep/sweep.h"
#include "test_util.h"

namespace normlab::test {

// lr 1e-2 trains, lr 1e4 diverges (loss above 20 after one step).
struct TinySweep {
  ScratchDir dir;
  std::string config = dir.write("tiny.toml", tiny_config_toml(dir.file("unused")));
  SweepOptions options() const {
    SweepOptions o;
    o.config_path = config;
    o.fixed_overrides = {"train.divergence_loss=20"};
    o.out_dir = dir.file("sweep");
    o.normlab_binary = kNormlab;
    o.quiet = true;
    return o;
  }
};

}  // namespace normlab::test
