"""--threads T from the command line into OPENBLAS_NUM_THREADS and OMP_NUM_THREADS, for the PyTorch
references. Debian's PyTorch does its GEMMs in the system OpenBLAS (pthread build), whose thread
count torch.set_num_threads does not control: without this, "--threads 1" still ran every GEMM on
all cores. The variables must be set before OpenBLAS is loaded, i.e. before importing torch, so
this module imports nothing but the standard library."""
import os
import sys


def pin_from_argv(argv=None):
    argv = sys.argv if argv is None else argv
    for i, arg in enumerate(argv):
        value = arg.split("=", 1)[1] if arg.startswith("--threads=") else (
            argv[i + 1] if arg == "--threads" and i + 1 < len(argv) else None)
        if value and value.isdigit() and int(value) > 0:
            os.environ["OPENBLAS_NUM_THREADS"] = value
            os.environ["OMP_NUM_THREADS"] = value
