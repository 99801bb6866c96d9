"""Norms defined in Python (normlab.register_norm, docs/python.md "A new norm"): a Python DyT is the
built-in dyt row bit for bit in float64; a registered norm trains in every placement, gradient-checks,
logs per layer, lets other Python threads run while it trains, and its mistakes are normlab errors."""
import json
import threading

import numpy as np
import pytest

import normlab
from normlab import ops

from test_runs import write_tiny


def dyt_forward(x, p):
    """The built-in row's composed forward (nn/norm_kinds.cpp), op for op."""
    y = ops.mul(ops.tanh(ops.mul(x, p["alpha"])), p["weight"])
    return ops.add(y, p["bias"]) if "bias" in p else y


DYT_PARAMS = {"alpha": 0.5, "weight": "ones", "bias": "zeros"}


def scale_norm(x, p):
    """ScaleNorm (Nguyen and Salazar 2019): g * x / ||x||, one learnable scalar g."""
    norm = ops.sqrt(ops.add_scalar(ops.sum(ops.square(x), -1, keepdim=True), p["eps"]))
    return ops.mul(ops.div(x, norm), p["g"])


normlab.register_norm("py_dyt", DYT_PARAMS, dyt_forward)
normlab.register_norm("scalenorm", {"g": float(np.sqrt(16))}, scale_norm, formula="g * x / ||x||")


def train(tmp_path, name, overrides, steps=6):
    cfg = normlab.load_config(write_tiny(tmp_path, steps=steps, name=name + ".toml"),
                              overrides=[f"train.name={name}", "log.grad_norm_every=1"] + overrides)
    return normlab.train(cfg)


@pytest.mark.parametrize("placement", ["pre", "post"])
def test_a_python_dyt_is_the_builtin_dyt_bit_for_bit(tmp_path, placement):
    common = [f"model.norm_placement={placement}", "model.dtype=float64", "model.bias=true"]
    builtin = train(tmp_path, "builtin", common + ["model.norm_type=dyt"])
    python = train(tmp_path, "python", common + ["model.norm_type=py_dyt"])
    assert builtin.status == python.status == "completed"
    # every step's loss, and every parameter's gradient norm at every step (alpha's included: an
    # alpha left out of the optimizer would drift apart from step 2)
    np.testing.assert_array_equal(python.metrics["train_loss"], builtin.metrics["train_loss"])
    assert sorted(python.grad_norms) == sorted(builtin.grad_norms)
    alphas = [k for k in python.grad_norms if k.endswith("norm1.alpha")]
    assert alphas, sorted(python.grad_norms)
    for key, values in builtin.grad_norms.items():
        np.testing.assert_array_equal(python.grad_norms[key], values, err_msg=key)


def test_a_registered_norm_has_a_name_a_formula_and_a_gradient_check():
    assert "scalenorm" in normlab.norm_names() and "layernorm" in normlab.norm_names()
    assert normlab._normlab.norm_formula("scalenorm") == "g * x / ||x||"
    assert "norm_scalenorm_composed" in normlab.op_case_names()
    rows = normlab.gradcheck_op("norm_scalenorm_composed")
    assert [r.input for r in rows] == ["x", "g"]


@pytest.mark.parametrize("placement", ["post", "pre", "sandwich"])
def test_a_registered_norm_trains_in_every_placement(tmp_path, placement):
    run = train(tmp_path, f"scale-{placement}", [f"model.norm_placement={placement}", "model.norm_type=scalenorm",
                                                 "optim.lr=3e-3"], steps=30)
    loss = run.metrics["train_loss"]
    assert run.status == "completed" and np.all(np.isfinite(loss))
    assert loss[-5:].mean() < loss[:5].mean()
    assert any(k.endswith("norm1.g") for k in run.grad_norms)  # logged per layer by its own name


def test_a_python_norm_trains_on_a_worker_thread_while_this_one_runs_python(tmp_path):
    # The trainer, GIL released, calls the norm from a thread that is not the main one: each call
    # must take the GIL itself (without it, the call crashes), and between calls this thread runs.
    result, ticks = {}, []
    worker = threading.Thread(target=lambda: result.update(run=train(tmp_path, "worker", ["model.norm_type=scalenorm"],
                                                                      steps=40)))
    worker.start()
    while worker.is_alive():
        ticks.append(sum(range(1000)))
        worker.join(0.001)
    assert result["run"].status == "completed"
    assert len(ticks) > 5


def test_a_forward_that_raises_while_training_is_a_normlab_error(tmp_path):
    calls = {"n": 0}

    def flaky(x, p):
        calls["n"] += 1
        if calls["n"] > 3:
            raise ZeroDivisionError("planted")
        return ops.mul(x, p["w"])

    normlab.register_norm("flaky", {"w": "ones"}, flaky)
    with pytest.raises(normlab.Error, match=r"\[norm 'flaky'\] forward raised .*ZeroDivisionError.*planted"):
        train(tmp_path, "flaky", ["model.norm_type=flaky"])
    assert normlab.ops.add(normlab.Var(np.ones(2)), normlab.Var(np.ones(2))).numpy().tolist() == [2.0, 2.0]


def test_bad_registrations_are_refused_by_name():
    with pytest.raises(normlab.Error, match=r"\[register_norm\] 'layernorm' is a built-in norm"):
        normlab.register_norm("layernorm", {"weight": "ones"}, lambda x, p: x)
    with pytest.raises(ValueError, match=r"parameter 'w' is 'one'; a string must be 'ones' or 'zeros'"):
        normlab.register_norm("typo", {"w": "one"}, lambda x, p: x)
    with pytest.raises(ValueError, match=r"forward must return a Var of x's shape \(2, 3, 8\), got \(2, 3, 1\)"):
        normlab.register_norm("shrinks", {}, lambda x, p: ops.mean(x, -1, keepdim=True))
    with pytest.raises(ValueError, match=r"forward\(x \(2, 3, 8\), params\) raised KeyError"):
        normlab.register_norm("no_weight", {}, lambda x, p: ops.mul(x, p["weight"]))
    assert "typo" not in normlab.norm_names()


def test_re_registering_a_name_makes_it_mean_the_new_row(tmp_path):
    normlab.register_norm("twice", {"w": "ones"}, lambda x, p: ops.mul(x, p["w"]))
    normlab.register_norm("twice", {"v": 2.0}, lambda x, p: ops.mul(x, p["v"]))
    assert normlab.norm_names().count("twice") == 1
    run = train(tmp_path, "twice", ["model.norm_type=twice"], steps=2)
    assert any(k.endswith("norm1.v") for k in run.grad_norms)
    assert not any(k.endswith("norm1.w") for k in run.grad_norms)


def test_the_run_directory_names_the_python_norm(tmp_path):
    run = train(tmp_path, "named", ["model.norm_type=scalenorm"], steps=2)
    assert run.config.model.norm_type == "scalenorm"
    assert json.loads((run.path / "summary.json").read_text())["status"] == "completed"
