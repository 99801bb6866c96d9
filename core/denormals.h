// Subnormal floats read and written as zero (train.flush_denormals), as torch.set_flush_denormal.
// A float32 product whose operands or result are subnormal (below 1.18e-38 in magnitude) can take
// a hundred times as long on x86 cores (bench/subnormal_gemm; the figure in bench/README.md).
// Flushing makes such values 0, which changes results only where they held subnormals.
#pragma once

namespace normlab {

// Sets (or clears) the x86-64 MXCSR flags FTZ (a subnormal result becomes 0) and DAZ (a subnormal
// operand reads as 0) on the calling thread and on every thread of the OpenMP pool at the current
// thread count, the threads that run normlab's CPU kernels, OpenBLAS and oneDNN. Threads started
// later inherit the flags of the thread that starts them. Call it after set_num_threads. Elsewhere
// than x86-64, asking to flush throws.
void set_flush_denormals(bool on);

// Whether the calling thread flushes subnormals (FTZ and DAZ both set).
bool flush_denormals_enabled();

}  // namespace normlab
