"""Gradient checks from Python: gradcheck(fn, inputs) for any function of ops, and gradcheck_op(name)
for the C++ registry's cases (the same as `normlab gradcheck --op NAME`)."""
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

from . import _normlab
from ._normlab import Var, no_grad, ops


class GradcheckError(AssertionError):
    """A gradient check failed; the message names the input, the worst entry and both gradients."""


@dataclass
class InputCheck:
    """The result for one input: the largest errors between backward's and the numeric gradient."""
    input: str                   # "0", "1", ... (gradcheck) or the case's name ("x", "gamma")
    elements: int
    max_abs_error: float
    max_rel_error: float         # abs error / max(|numeric|, |analytic|, 1e-3)
    passed: bool
    worst: Optional[Tuple[int, ...]] = None  # the entry with the largest excess (gradcheck only)
    analytic: Optional[float] = None         # at `worst`
    numeric: Optional[float] = None          # at `worst`


def _loss(fn, arrays, weights):
    """L = sum(fn(*inputs) * w) without recording, in float64."""
    with no_grad():
        y = fn(*[Var(a) for a in arrays])
        return float(np.sum(y.numpy().astype(np.float64) * weights))


def gradcheck(fn: Callable[..., Var], inputs: Sequence, eps: float = 1e-6, atol: float = 1e-7,
              rtol: float = 1e-5, seed: int = 0, raise_on_failure: bool = True) -> List[InputCheck]:
    """Checks backward() of fn against central finite differences, in float64.

    fn takes one Var per input and returns a Var of any shape; it is reduced to the scalar
    L = sum(fn(x) * w) with fixed random weights w (w = 1 for a scalar output), so every output
    element counts. For each input
    element, numeric = (L(x + eps e_i) - L(x - eps e_i)) / (2 eps) is compared with backward's
    dL/dx_i; an entry fails when |numeric - analytic| > atol + rtol * |numeric|. Inputs (arrays,
    lists or Tensors) are copied to float64; fn's own constants must be float64 too.

    Returns one InputCheck per input; raises GradcheckError (an AssertionError) naming the input
    and the worst entry when any fails (raise_on_failure=False returns instead).
    """
    arrays = [np.array(np.asarray(x), dtype=np.float64, copy=True) for x in inputs]
    leaves = [Var(a.copy(), requires_grad=True) for a in arrays]
    y = fn(*leaves)
    if not isinstance(y, Var):
        raise TypeError(f"gradcheck: fn must return a normlab.Var, got {type(y).__name__}")
    # A scalar output is checked as it is; others against fixed random weights.
    weights = np.ones(()) if y.ndim == 0 else np.random.default_rng(seed).standard_normal(y.shape)
    ops.sum_all(ops.mul(y, Var(weights))).backward()

    results, failures = [], []
    for k, (a, leaf) in enumerate(zip(arrays, leaves)):
        analytic = leaf.grad.numpy() if leaf.grad is not None else np.zeros_like(a)
        numeric = np.zeros_like(a)
        flat = a.reshape(-1)  # a view: perturbing it perturbs a
        for i in range(flat.size):
            original = flat[i]
            flat[i] = original + eps
            up = _loss(fn, arrays, weights)
            flat[i] = original - eps
            down = _loss(fn, arrays, weights)
            flat[i] = original
            numeric.reshape(-1)[i] = (up - down) / (2 * eps)
        error = np.abs(numeric - analytic)
        excess = error - (atol + rtol * np.abs(numeric))
        rel = error / np.maximum(np.maximum(np.abs(numeric), np.abs(analytic)), 1e-3)
        nonfinite = ~np.isfinite(error)
        excess[nonfinite] = np.inf
        worst = np.unravel_index(int(np.argmax(excess)), a.shape) if a.size else None
        check = InputCheck(input=str(k), elements=int(a.size),
                           max_abs_error=float(np.max(np.where(nonfinite, np.inf, error), initial=0.0)),
                           max_rel_error=float(np.max(np.where(nonfinite, np.inf, rel), initial=0.0)),
                           passed=bool(a.size == 0 or np.max(excess) <= 0),
                           worst=tuple(int(i) for i in worst) if worst is not None else None,
                           analytic=float(analytic[worst]) if worst is not None else None,
                           numeric=float(numeric[worst]) if worst is not None else None)
        results.append(check)
        if not check.passed:
            failures.append(f"input {k} {a.shape}: worst entry {check.worst}: analytic {check.analytic:.9g}, "
                            f"numeric {check.numeric:.9g} (abs error {abs(check.analytic - check.numeric):.3g} > "
                            f"atol {atol:g} + rtol {rtol:g} * |numeric|); max abs error {check.max_abs_error:.3g}")
    if failures and raise_on_failure:
        raise GradcheckError("gradcheck failed: " + "; ".join(failures))
    return results


def gradcheck_op(name: str, seed: int = 0, shape: Sequence[int] = (), raise_on_failure: bool = True) -> List[InputCheck]:
    """Runs the C++ registry's gradient check `name` (`normlab gradcheck --op NAME`).

    The case builds its own float64 inputs (of `shape` when given, else its default) and compares
    backward with central differences under its own tolerance on the relative error. Returns one
    InputCheck per checked input; raises GradcheckError naming the failing inputs (or returns, with
    raise_on_failure=False). normlab.op_case_names() lists the cases. Clears this thread's tape.
    """
    rows = _normlab.run_op_case(name, seed, list(shape))
    results = [InputCheck(input=r["input"], elements=r["elements"], max_abs_error=r["max_abs_error"],
                          max_rel_error=r["max_rel_error"], passed=r["passed"]) for r in rows]
    failed = [f"input {r['input']}: max rel error {r['max_rel_error']:.3g} > tolerance {r['tolerance']:.1g}"
              for r in rows if not r["passed"]]
    if failed and raise_on_failure:
        raise GradcheckError(f"gradcheck_op({name!r}) failed: " + "; ".join(failed))
    return results
