// An independent check of the init-time probes: E1's last-layer W2 gradient and E2's per-layer
// FFN gradient profile recomputed by the PyTorch model of bench/torch_model.py
// (bench/torch_probe.py) on the same initial weights and the same batches. Runs when
// /usr/bin/python3 can import torch (Debian's python3-torch) and grids.torch_seeds > 0; otherwise
// the section says why it did not run.
#pragma once
#include "xiong/report.h"

namespace normlab::xiong {

Section run_torch_check(const Context& ctx);

}  // namespace normlab::xiong
