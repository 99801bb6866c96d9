"""normlab.Var and the tape from Python: gradients, the accumulation rule, errors."""
import numpy as np
import pytest

import normlab
from normlab import ops


def rng():
    return np.random.default_rng(0)


def test_composed_function_matches_finite_differences():
    x = rng().standard_normal((3, 5))
    w = rng().standard_normal((5, 4))

    def f(x, w):
        h = ops.gelu(ops.matmul(ops.layer_norm(x), w))
        return ops.mean(ops.tanh(h) * h, -1)

    checks = normlab.gradcheck(f, [x, w])
    assert [c.passed for c in checks] == [True, True]
    assert all(c.max_abs_error < 1e-7 for c in checks)


def test_grad_matches_a_closed_form():
    # L = sum(x^2) / 2 + sum(3 x)  =>  dL/dx = x + 3
    a = rng().standard_normal((2, 3))
    x = normlab.Var(a, requires_grad=True)
    loss = ops.scale(ops.sum_all(ops.square(x)), 0.5) + ops.sum_all(ops.scale(x, 3.0))
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), a + 3, rtol=1e-12)


def test_a_var_used_twice_gets_the_sum_of_both_gradients():
    a = rng().standard_normal((4,))
    x = normlab.Var(a, requires_grad=True)
    # y = sum(x * x) + sum(2 x): x feeds mul twice and scale once => dy/dx = 2x + 2
    y = ops.sum_all(ops.mul(x, x)) + ops.sum_all(ops.scale(x, 2.0))
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * a + 2, rtol=1e-12)


def test_gradients_accumulate_until_zero_grad_and_the_tape_is_freed():
    x = normlab.Var(np.ones(3), requires_grad=True)
    for _ in range(2):
        ops.sum_all(ops.scale(x, 2.0)).backward()
        assert normlab.tape_size() == 0
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0, 4.0])
    x.zero_grad()
    assert x.grad is None


def test_no_grad_records_nothing():
    x = normlab.Var(np.ones(3), requires_grad=True)
    with normlab.no_grad():
        assert not normlab.grad_enabled()
        y = ops.sum_all(ops.square(x))
    assert normlab.grad_enabled() and not y.requires_grad and normlab.tape_size() == 0


def test_arrays_pass_as_constants_and_operators_broadcast():
    x = normlab.Var(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = ops.sum_all((x * np.array([1.0, 2.0, 3.0]) - 1.0) / 2.0)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.tile([0.5, 1.0, 1.5], (2, 1)))


def test_rms_norm_matches_its_formula():
    a = rng().standard_normal((2, 8))
    g = rng().standard_normal(8)
    y = ops.rms_norm(normlab.Var(a), normlab.Var(g), eps=1e-6).numpy()
    np.testing.assert_allclose(y, a / np.sqrt(np.mean(a * a, -1, keepdims=True) + 1e-6) * g, rtol=1e-12)


def test_cross_entropy_takes_integer_targets():
    logits = normlab.Var(rng().standard_normal((3, 5)), requires_grad=True)
    loss = ops.cross_entropy(logits, np.array([0, 4, 2]))     # int64 -> int32
    p = np.exp(logits.numpy()) / np.exp(logits.numpy()).sum(-1, keepdims=True)
    assert loss.item() == pytest.approx(-np.mean(np.log(p[[0, 1, 2], [0, 4, 2]])), rel=1e-12)
    loss.backward()
    assert logits.grad.shape == (3, 5)


def test_op_errors_become_python_exceptions_with_the_op_and_shapes():
    a = normlab.Var(np.zeros((2, 3)))
    b = normlab.Var(np.zeros((4, 5)))
    with pytest.raises(ValueError) as caught:
        ops.matmul(a, b)
    message = str(caught.value)
    assert message.startswith("[matmul]") and "(2, 3)" in message and "(4, 5)" in message
    assert isinstance(caught.value, RuntimeError) and isinstance(caught.value, normlab.Error)
    with pytest.raises(normlab.Error, match=r"^\[add\].*\(2, 3\).*\(4, 5\)"):
        ops.add(a, b)
    with pytest.raises(normlab.Error, match=r"^\[rms_norm\] eps must be > 0"):
        ops.rms_norm(a, eps=0.0)


def test_an_error_in_a_fresh_interpreter_is_a_python_traceback_not_a_crash():
    # A C++ exception that escaped the bindings would abort the process (std::terminate); here it
    # must end as an ordinary uncaught Python exception: exit status 1 and the message on stderr.
    import os
    import subprocess
    import sys
    code = ("import numpy as np, normlab\n"
            "normlab.ops.matmul(normlab.Var(np.zeros((2, 3))), normlab.Var(np.zeros((4, 5))))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ))
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "normlab.Error: [matmul]" in done.stderr and "(2, 3)" in done.stderr


def test_ops_imports_as_a_submodule():
    import importlib
    ops_module = importlib.import_module("normlab.ops")
    from normlab.ops import layer_norm
    assert ops_module is normlab.ops
    assert layer_norm is normlab.ops.layer_norm
