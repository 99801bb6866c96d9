"""normlab.gradcheck (Python functions) and normlab.gradcheck_op (the C++ registry's cases)."""
import numpy as np
import pytest

import normlab
from normlab import ops


def test_gradcheck_op_layer_norm_passes():
    checks = normlab.gradcheck_op("layer_norm")
    assert checks and all(c.passed for c in checks)
    assert {c.input for c in checks} >= {"x"}


def test_gradcheck_op_lists_and_rejects_unknown_names():
    assert "layer_norm" in normlab.op_case_names() and "rms_norm" in normlab.op_case_names()
    with pytest.raises(normlab.Error, match="unknown op case 'no_such_op'"):
        normlab.gradcheck_op("no_such_op")


def test_gradcheck_passes_for_a_norm_built_from_plain_ops():
    def rms(x):  # x / sqrt(mean(x^2) + eps), composed
        return ops.mul(x, ops.rsqrt(ops.add_scalar(ops.mean(ops.square(x), -1, keepdim=True), 1e-6)))

    x = np.random.default_rng(1).standard_normal((3, 6))
    assert all(c.passed for c in normlab.gradcheck(rms, [x]))
    np.testing.assert_allclose(rms(normlab.Var(x)).numpy(), ops.rms_norm(normlab.Var(x)).numpy(), rtol=1e-12)


def test_gradcheck_of_a_wrong_custom_function_fails_naming_the_worst_entry():
    # A "custom op" whose forward is x^3 but whose backward is that of x^2 (a detached x^3 - x^2
    # shift makes the forward right and leaves the gradient wrong).
    def wrong_cube(x):
        x2 = ops.square(x)
        shift = (ops.mul(x2, x) - x2).detach()
        return ops.sum_all(x2 + shift)  # scalar: d/dx is 2x where it should be 3x^2

    x = np.array([[0.5, -1.0, 2.0]])
    with pytest.raises(AssertionError, match=r"input 0 \(1, 3\): worst entry \(0, 2\)"):
        normlab.gradcheck(wrong_cube, [x])
    checks = normlab.gradcheck(wrong_cube, [x], raise_on_failure=False)
    assert not checks[0].passed and checks[0].analytic == pytest.approx(4.0) and checks[0].numeric == pytest.approx(12.0)
