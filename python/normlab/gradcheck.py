"""Gradient checks from Python, both by the C++ checker (autograd/gradcheck.h): gradcheck(fn, inputs)
for any function of ops, and gradcheck_op(name) for the C++ registry's cases (the same as
`normlab gradcheck --op NAME`)."""
import warnings
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

from . import _normlab
from ._normlab import Var


class GradcheckError(AssertionError):
    """A gradient check failed; the message names the input, the worst entry and both gradients."""


@dataclass
class InputCheck:
    """The result for one input: the largest errors between backward's and the numeric gradient."""
    input: str                   # "0", "1", ... (gradcheck) or the case's name ("x", "gamma")
    elements: int
    max_abs_error: float
    max_rel_error: float         # abs error / max(|numeric|, |analytic|, floor)
    passed: bool
    worst: Optional[Tuple[int, ...]] = None  # the entry with the largest relative error (gradcheck only)
    analytic: Optional[float] = None         # at `worst`
    numeric: Optional[float] = None          # at `worst`


def gradcheck(fn: Callable[..., Var], inputs: Sequence, eps: float = 1e-6, tolerance: float = 1e-6,
              floor: float = 1e-3, seed: int = 0, raise_on_failure: bool = True,
              atol: Optional[float] = None, rtol: Optional[float] = None) -> List[InputCheck]:
    """Checks backward() of fn against central finite differences in float64, with the C++ checker.

    fn takes one Var per input and returns a Var of any shape; it is reduced to the scalar
    L = sum(fn(x) * w) with fixed random weights w (from `seed`), so every output element counts.
    For each input element, numeric = (L(x + eps e_i) - L(x - eps e_i)) / (2 eps) is compared with
    backward's dL/dx_i; an input passes when every entry's relative error
    |numeric - analytic| / max(|numeric|, |analytic|, floor) is <= tolerance: the rule of
    `normlab gradcheck` and of the C++ tests (autograd/gradcheck.h). Inputs (arrays, lists or
    Tensors) are copied to float64; fn's own constants must be float64 too.

    atol and rtol (the pass rule before the checker was shared) are deprecated: given, they map to
    tolerance = rtol and floor = atol / rtol, i.e. an entry passes when its error is at most
    max(atol, rtol |numeric|, rtol |analytic|), within a factor 2 of atol + rtol |numeric|.

    Returns one InputCheck per input; raises GradcheckError (an AssertionError) naming the input
    and the worst entry when any fails (raise_on_failure=False returns instead).
    """
    if atol is not None or rtol is not None:
        warnings.warn("gradcheck: atol and rtol are deprecated; pass tolerance (on the relative error) and floor "
                      "(its denominator's floor): tolerance = rtol, floor = atol / rtol", DeprecationWarning,
                      stacklevel=2)
        rtol = 1e-5 if rtol is None else rtol
        atol = 1e-7 if atol is None else atol
        tolerance, floor = rtol, atol / rtol
    arrays = [np.array(np.asarray(x), dtype=np.float64, copy=True) for x in inputs]
    rows = _normlab._gradcheck(fn, arrays, eps, tolerance, floor, seed)
    results, failures = [], []
    for a, r in zip(arrays, rows):
        worst = tuple(int(i) for i in np.unravel_index(r["worst"], a.shape)) if r["worst"] >= 0 else None
        check = InputCheck(input=r["input"], elements=r["elements"], max_abs_error=r["max_abs_error"],
                           max_rel_error=r["max_rel_error"], passed=r["passed"], worst=worst,
                           analytic=r["worst_analytic"] if worst is not None else None,
                           numeric=r["worst_numeric"] if worst is not None else None)
        results.append(check)
        if not check.passed:
            failures.append(f"input {check.input} {a.shape}: worst entry {check.worst}: analytic {check.analytic:.9g}, "
                            f"numeric {check.numeric:.9g} (relative error {check.max_rel_error:.3g} > tolerance "
                            f"{tolerance:g}, floor {floor:g}); max abs error {check.max_abs_error:.3g}")
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
