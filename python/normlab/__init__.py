"""normlab from Python: the C++ engine's tensors, tape and ops (docs/python.md).

    import numpy as np, normlab
    from normlab import ops
    x = normlab.Var(np.random.randn(4, 8), requires_grad=True)   # float64, viewed without a copy
    y = ops.sum_all(ops.square(ops.layer_norm(x)))
    y.backward()                     # x.grad: a Tensor; x.grad.numpy() views it
    normlab.gradcheck(lambda x: ops.rms_norm(x), [np.random.randn(3, 5)])
    run = normlab.train(normlab.load_config("experiments/configs/quickstart.toml"))
    run.metrics["train_loss"], run.grad_norms["global"]     # NumPy, from the run's files

Tensor, Var, no_grad, ops, Error and the op registry come from the extension module _normlab;
gradcheck, gradcheck_op and tensor are written in Python (gradcheck.py, tensor.py, here), and so are
Config and load_config over the module's load_run_config (config.py); train, Run and open_run over train_run (runs.py).
"""
import atexit as _atexit
import pkgutil as _pkgutil
import sys as _sys

# In a build tree the extension module lives in BUILD/python/normlab/ while these sources stay in
# python/normlab/: with both on PYTHONPATH, the package spans the two folders (pip install puts
# both halves in one folder, where this changes nothing).
__path__ = _pkgutil.extend_path(__path__, __name__)

from . import _normlab
from ._normlab import (Error, Tensor, Var, backward, clear_tape, constant, grad_enabled, no_grad,
                       op_case_names, parameter, tape_size)
from ._normlab import ops
# The ops are a submodule of the extension; registering it under its package name makes
# `import normlab.ops as ops` and `from normlab.ops import layer_norm` work (as MLX's mlx.core).
_sys.modules[__name__ + ".ops"] = ops
from .gradcheck import GradcheckError, InputCheck, gradcheck, gradcheck_op
from .config import Config, Section, load_config
from .runs import Interrupted, Run, open_run, train
from .norms import norm_names, register_norm
from .placements import placement_names, register_placement
from .suites import Table, cli_binary, reproduce_xiong, sweep
from .tensor import tensor

__all__ = ["Error", "Tensor", "Var", "backward", "clear_tape", "constant", "grad_enabled", "no_grad",
           "op_case_names", "ops", "parameter", "tape_size", "gradcheck", "gradcheck_op", "GradcheckError",
           "InputCheck", "tensor", "Config", "Interrupted", "Run", "Section", "load_config", "open_run", "train",
           "norm_names", "register_norm", "placement_names", "register_placement", "Table", "cli_binary",
           "reproduce_xiong", "sweep"]

# Ops recorded but never consumed by backward() hold their tensors (and the NumPy arrays those
# view) on the thread's tape: drop them while the interpreter is still alive.
_atexit.register(_normlab.clear_tape)
# Norms and placements registered from Python hold their functions for the life of the process: let
# go of them before the interpreter finalizes.
_atexit.register(_normlab._release_python_functions)
