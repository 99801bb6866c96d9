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
    # Relative errors |3x^2 - 2x| / max(|3x^2|, |2x|): 0.25, 5/3 and 2/3; the worst is x = -1.
    with pytest.raises(AssertionError, match=r"input 0 \(1, 3\): worst entry \(0, 1\)"):
        normlab.gradcheck(wrong_cube, [x])
    checks = normlab.gradcheck(wrong_cube, [x], raise_on_failure=False)
    assert not checks[0].passed and checks[0].analytic == pytest.approx(-2.0) and checks[0].numeric == pytest.approx(3.0)
    assert checks[0].max_rel_error == pytest.approx(5 / 3, rel=1e-8) and checks[0].max_abs_error == pytest.approx(8.0)


def _scaled_square(delta):
    """sum((1 + delta) x^2) whose backward is that of sum(x^2): numeric 2 (1 + delta) x, analytic 2x."""
    def f(x):
        x2 = ops.square(x)
        return ops.sum_all(x2 + ops.scale(x2, delta).detach())
    return f


def test_gradcheck_uses_the_cpp_rule_relative_error_against_tolerance():
    # Every entry's relative error is delta / (1 + delta) (|numeric| = 2 (1 + delta) |x| > floor).
    x = np.array([[0.5, -1.5, 2.0, 3.0]])
    delta = 1e-4
    check = normlab.gradcheck(_scaled_square(delta), [x], raise_on_failure=False)[0]
    assert check.max_rel_error == pytest.approx(delta / (1 + delta), rel=1e-4)  # central differences: ~1e-9 noise
    assert not check.passed  # the default tolerance, 1e-6, sees an error of 1e-4
    assert normlab.gradcheck(_scaled_square(delta), [x], tolerance=2e-4)[0].passed
    # Below the default tolerance: passes.
    assert normlab.gradcheck(_scaled_square(1e-8), [x])[0].passed


def test_gradcheck_floor_makes_tiny_gradients_count_by_their_absolute_error():
    # At x = 1e-6 the gradients are ~2e-6: relative error delta / (1 + delta) without the floor,
    # 2 delta x / floor with it.
    x = np.array([1e-6, 2e-6])
    check = normlab.gradcheck(_scaled_square(1e-2), [x], raise_on_failure=False)[0]
    assert check.max_rel_error == pytest.approx(2 * 1e-2 * 2e-6 / 1e-3, rel=1e-3)


def test_gradcheck_atol_rtol_are_deprecated_and_mapped_onto_the_rule():
    x = np.array([[0.5, -1.5, 2.0, 3.0]])
    with pytest.warns(DeprecationWarning, match="atol and rtol are deprecated"):
        checks = normlab.gradcheck(_scaled_square(1e-4), [x], atol=1e-7, rtol=1e-3)
    assert checks[0].passed  # tolerance 1e-3 over a relative error of 1e-4
    with pytest.warns(DeprecationWarning):
        assert not normlab.gradcheck(_scaled_square(1e-4), [x], rtol=1e-5, raise_on_failure=False)[0].passed


def test_gradcheck_refuses_a_function_that_returns_no_var():
    with pytest.raises(normlab.Error, match="fn must return a normlab.Var"):
        normlab.gradcheck(lambda x: 3.0, [np.ones(2)])
