"""Placements defined in Python (normlab.register_placement, docs/python.md "A new placement"): a
Python Mix-LN is the built-in mix_ln row bit for bit in float64, a Python DeepNorm with its scales
as functions the built-in deepnorm row, and bad registrations are refused by name."""
import numpy as np
import pytest

import normlab

from test_runs import write_tiny

normlab.register_placement("py_mix", lambda layer, layers: "post" if layer < layers // 4 else "pre", final_norm=True)
normlab.register_placement("py_deepnorm", "post",
                           shortcut_scale=lambda stack, layers, other: (2.0 * layers) ** 0.25,
                           init_scale=lambda stack, layers, other: (8.0 * layers) ** -0.25)


def train(tmp_path, name, overrides, steps=6):
    cfg = normlab.load_config(write_tiny(tmp_path, steps=steps, name=name + ".toml"),
                              overrides=[f"train.name={name}", "log.grad_norm_every=1", "model.dtype=float64",
                                         "model.n_layers=4"] + overrides)
    return normlab.train(cfg)


@pytest.mark.parametrize("builtin,python", [("mix_ln", "py_mix"), ("deepnorm", "py_deepnorm")])
def test_a_python_placement_is_the_builtin_row_bit_for_bit(tmp_path, builtin, python):
    a = train(tmp_path, "builtin", [f"model.norm_placement={builtin}"])
    b = train(tmp_path, "python", [f"model.norm_placement={python}"])
    assert a.status == b.status == "completed"
    np.testing.assert_array_equal(b.metrics["train_loss"], a.metrics["train_loss"])
    assert sorted(b.grad_norms) == sorted(a.grad_norms)
    for key, values in a.grad_norms.items():
        np.testing.assert_array_equal(b.grad_norms[key], values, err_msg=key)


def test_mix_ln_differs_from_pre_at_four_layers(tmp_path):
    # The check above would pass vacuously if both rows were Pre-LN: at 4 layers layer 0 is Post-LN.
    mix = train(tmp_path, "mix", ["model.norm_placement=mix_ln"])
    pre = train(tmp_path, "pre", ["model.norm_placement=pre"])
    assert not np.array_equal(mix.metrics["train_loss"], pre.metrics["train_loss"])


def test_registered_placements_are_config_values():
    names = normlab.placement_names()
    assert names[:8] == ["post", "pre", "none", "sandwich", "deepnorm", "admin", "mix_ln", "b2t"]
    assert "py_mix" in names and "py_deepnorm" in names


def test_bad_registrations_are_refused_by_name():
    with pytest.raises(ValueError, match=r"placement 'w': wiring\(0, 8\) returned 'middle'"):
        normlab.register_placement("w", "middle")
    with pytest.raises(ValueError, match=r"placement 'r': wiring\(2, 8\) raised ZeroDivisionError"):
        normlab.register_placement("r", lambda layer, layers: "pre" if layer < 2 else 1 / 0)
    with pytest.raises(ValueError, match="shortcut_scale must be a positive number"):
        normlab.register_placement("s", "post", shortcut_scale=-1.0)
    with pytest.raises(ValueError, match="non-empty word"):
        normlab.register_placement("two words", "pre")
    with pytest.raises(normlab.Error, match="'post' is a built-in placement"):
        normlab.register_placement("post", "pre")


def test_a_scale_function_that_fails_while_building_is_a_normlab_error(tmp_path):
    normlab.register_placement("py_bad_scale", "post", shortcut_scale=lambda stack, layers, other: -2.0)
    with pytest.raises(normlab.Error, match=r"placement 'py_bad_scale'.*shortcut_scale must return a positive"):
        train(tmp_path, "bad", ["model.norm_placement=py_bad_scale"])
