"""Norms defined in Python: rows of the C++ norm table (nn/norm_kinds.h), docs/python.md.

    import normlab
    from normlab import ops

    def dyt(x, p):                      # p: the parameters by name (Vars) and "eps" (float)
        y = ops.mul(ops.tanh(ops.mul(x, p["alpha"])), p["weight"])
        return ops.add(y, p["bias"]) if "bias" in p else y

    normlab.register_norm("my_dyt", params={"alpha": 0.5, "weight": "ones", "bias": "zeros"}, forward=dyt)
    cfg = normlab.load_config("experiments/configs/quickstart.toml", ["model.norm_type=my_dyt"])
"""
from __future__ import annotations

import numbers
from typing import Callable, Mapping, Union

import numpy as _np

from . import _normlab

ParamSpec = Union[str, float, Mapping[str, object]]

_PER_CHANNEL = {"ones": 1.0, "zeros": 0.0}


def _param_row(norm: str, name: str, spec: ParamSpec) -> tuple:
    """(name, per_channel, needs_bias, initial) for one entry of register_norm's params."""
    needs_bias = name == "bias"
    if isinstance(spec, str):
        if spec not in _PER_CHANNEL:
            raise ValueError(f"[register_norm] norm '{norm}': parameter '{name}' is '{spec}'; a string must be "
                             f"'ones' or 'zeros' (a per-channel vector), a number gives one learnable scalar")
        return (name, True, needs_bias, _PER_CHANNEL[spec])
    if isinstance(spec, numbers.Real) and not isinstance(spec, bool):
        return (name, False, needs_bias, float(spec))
    if isinstance(spec, Mapping):
        unknown = set(spec) - {"init", "per_channel", "needs_bias"}
        if unknown or "init" not in spec:
            raise ValueError(f"[register_norm] norm '{norm}': parameter '{name}' as a dict takes 'init' (a number) "
                             f"and optionally 'per_channel', 'needs_bias'; got keys {sorted(spec)}")
        return (name, bool(spec.get("per_channel", True)), bool(spec.get("needs_bias", needs_bias)),
                float(spec["init"]))
    raise ValueError(f"[register_norm] norm '{norm}': parameter '{name}' must be 'ones', 'zeros', a number or "
                     f"a dict, got {type(spec).__name__}")


def _probe(name: str, rows: list, forward: Callable) -> None:
    """Runs the forward once on a (2, 3, 8) float64 input, so that a mistake shows now, named."""
    channels = 8
    x = _normlab.Var(_np.linspace(-2.0, 2.0, 2 * 3 * channels).reshape(2, 3, channels))
    p = {row[0]: _normlab.Var(_np.full(channels if row[1] else 1, row[3])) for row in rows}
    p["eps"] = 1e-5
    with _normlab.no_grad():
        try:
            y = forward(x, p)
        except Exception as e:
            raise ValueError(f"[register_norm] norm '{name}': forward(x (2, 3, 8), params) raised "
                             f"{type(e).__name__}: {e}") from e
    if not isinstance(y, _normlab.Var) or tuple(y.shape) != (2, 3, channels):
        got = tuple(y.shape) if isinstance(y, _normlab.Var) else type(y).__name__
        raise ValueError(f"[register_norm] norm '{name}': forward must return a Var of x's shape (2, 3, 8), "
                         f"got {got}")


def register_norm(name: str, params: Mapping[str, ParamSpec], forward: Callable, *, formula: str = "",
                  kept_tensors: float = 4.0) -> str:
    """Makes `name` a value of model.norm_type, in this process, in every placement.

    params maps each parameter's name to its initial value: "ones" or "zeros" for a per-channel
    vector (C,), a number for one learnable scalar (1,), or {"init": v, "per_channel": bool,
    "needs_bias": bool}. A parameter named "bias" exists only when model.bias is true, as the
    built-in norms' biases do. forward(x, p) composes normlab.ops on x (..., C) and returns a Var of
    x's shape; p holds the parameters that exist (Vars, by name) and "eps" (model.norm_eps).

    The norm then trains, gradient-checks (normlab.gradcheck_op(f"norm_{name}_composed")), counts
    in the memory estimate (kept_tensors: the (rows, C) tensors its forward keeps for backward) and
    logs per layer exactly like a built-in row of nn/norm_kinds.cpp. forward is called with the GIL
    held, from the thread that trains. Registering a name again makes it mean the new row (models
    built before keep the old one); a built-in name is refused. Returns the name.
    """
    if not callable(forward):
        raise ValueError(f"[register_norm] norm '{name}': forward must be callable, got {type(forward).__name__}")
    rows = [_param_row(name, key, spec) for key, spec in params.items()]
    _probe(name, rows, forward)
    _normlab._register_norm(name, rows, forward, formula=formula, kept_tensors=float(kept_tensors))
    return name


def norm_names() -> list[str]:
    """The values model.norm_type takes now: the built-in norms, then those registered here."""
    return _normlab.norm_names()
