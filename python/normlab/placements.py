"""Placements defined in Python: rows of the C++ placement table (nn/placement.h), docs/python.md.

    import normlab

    # Mix-LN (Li et al. 2024): Post-LN in the first quarter of the layers, Pre-LN after
    normlab.register_placement("my_mix", wiring=lambda layer, layers: "post" if layer < layers // 4 else "pre",
                               final_norm=True)
    cfg = normlab.load_config("experiments/configs/quickstart.toml", ["model.norm_placement=my_mix"])

A row applies to the decoder-only blocks and to both stacks of an encoder-decoder, as a built-in one.
"""
from __future__ import annotations

import numbers
from typing import Callable, Optional, Union

from . import _normlab

WIRINGS = ("post", "pre", "none", "sandwich")

Wiring = Union[str, Callable[[int, int], str]]
Scale = Union[None, float, Callable[[str, int, int], float]]


def _as_scale(name: str, what: str, scale: Scale):
    """None, a number (every stack) or a function (stack, layers, other_layers) -> float."""
    if scale is None or callable(scale):
        return scale
    if isinstance(scale, numbers.Real) and not isinstance(scale, bool) and scale > 0:
        value = float(scale)
        return lambda stack, layers, other_layers: value
    raise ValueError(f"[register_placement] placement '{name}': {what} must be a positive number or a function "
                     f"(stack, layers, other_layers) -> float, got {scale!r}")


def _as_wiring(name: str, wiring: Wiring) -> Callable[[int, int], str]:
    """A function (layer, layers) -> wiring name, checked on a stack of 8 layers now."""
    function = (lambda layer, layers: wiring) if isinstance(wiring, str) else wiring
    if not callable(function):
        raise ValueError(f"[register_placement] placement '{name}': wiring must be one of {', '.join(WIRINGS)} or a "
                         f"function (layer, layers) -> one of them, got {wiring!r}")
    for layer in range(8):
        try:
            got = function(layer, 8)
        except Exception as e:
            raise ValueError(f"[register_placement] placement '{name}': wiring({layer}, 8) raised "
                             f"{type(e).__name__}: {e}") from e
        if got not in WIRINGS:
            raise ValueError(f"[register_placement] placement '{name}': wiring({layer}, 8) returned {got!r}, not one "
                             f"of {', '.join(WIRINGS)}")
    return function


def register_placement(name: str, wiring: Wiring, final_norm: bool = False, bottom_to_top: bool = False,
                       shortcut_scale: Scale = None, init_scale: Scale = None, label: str = "",
                       formula: str = "") -> str:
    """Adds a placement that model.norm_placement = NAME then builds, in this process.

    wiring: how each layer's sub-layers join the residual stream: "post" (Norm(a x + f(x))), "pre"
    (x + f(Norm(x))), "none" (x + f(x)), "sandwich" (x + PostNorm(f(Norm(x)))), for every layer, or
    a function (layer, layers) -> one of them (layer 0-based, layers the stack's depth).
    final_norm: a norm after each stack. bottom_to_top: B2T, the layer's input joins the sum under
    its last post-wired norm. shortcut_scale (the a of post) and init_scale (multiplying the initial
    standard deviation of attention's v and o and the FFN's matrices): a number, or a function
    (stack, layers, other_layers) -> float with stack "single", "encoder" or "decoder". A name
    registered again means the new row from then on. Returns the name.
    """
    if not isinstance(name, str) or not name or any(c in name for c in " \t\"'=,"):
        raise ValueError(f"[register_placement] a placement's name must be a non-empty word, got {name!r}")
    function = _as_wiring(name, wiring)
    _normlab._register_placement(name, label, formula, function, bool(final_norm), bool(bottom_to_top),
                                 _as_scale(name, "shortcut_scale", shortcut_scale),
                                 _as_scale(name, "init_scale", init_scale))
    return name


def placement_names() -> list:
    """The values model.norm_placement takes now: the built-in placements, then those registered here."""
    return list(_normlab.placement_names())
