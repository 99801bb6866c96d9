"""What a norm defined in Python costs per training step, against the same norm built in (issue 39).

    PYTHONPATH=python:build/python build/py-venv/bin/python bench/python_norm.py [--steps 60] [--reps 3]

Pairs, each trained from the same config for --steps steps on one thread, interleaved --reps times:
  dyt        the built-in row (composed of ops, no fused kernel)  vs  the same forward from Python
  layernorm  the built-in row (fused kernel)                      vs  LayerNorm composed in Python
  rmsnorm    the built-in row (fused kernel)                      vs  RMSNorm composed in Python
on the quickstart's copy-task model (6 layers, d 64, batch 16 x 16: 13 norms per step forward).
A step's time is the median over the steps after the first 10 of 1 / (tokens_per_s / tokens per
step); the figure for a norm is the median over reps. The ratio Python / built-in is the price.
"""
import argparse
import statistics
import tempfile
from pathlib import Path

import numpy as np

import normlab
from normlab import ops

CONFIG = Path(__file__).resolve().parents[1] / "experiments" / "configs" / "quickstart.toml"


def py_dyt(x, p):
    y = ops.mul(ops.tanh(ops.mul(x, p["alpha"])), p["weight"])
    return ops.add(y, p["bias"]) if "bias" in p else y


def py_layernorm(x, p):
    centred = ops.sub(x, ops.mean(x, -1, keepdim=True))
    var = ops.mean(ops.square(centred), -1, keepdim=True)
    y = ops.mul(ops.div(centred, ops.sqrt(ops.add_scalar(var, p["eps"]))), p["weight"])
    return ops.add(y, p["bias"]) if "bias" in p else y


def py_rmsnorm(x, p):
    ms = ops.mean(ops.square(x), -1, keepdim=True)
    return ops.mul(ops.div(x, ops.sqrt(ops.add_scalar(ms, p["eps"]))), p["weight"])


PAIRS = {"dyt": ("py_dyt", {"alpha": 0.5, "weight": "ones", "bias": "zeros"}, py_dyt),
         "layernorm": ("py_layernorm", {"weight": "ones", "bias": "zeros"}, py_layernorm),
         "rmsnorm": ("py_rmsnorm", {"weight": "ones"}, py_rmsnorm)}


def step_ms(norm, steps, out):
    cfg = normlab.load_config(CONFIG, overrides=[
        f"model.norm_type={norm}", "model.norm_placement=pre", f"train.steps={steps}", f"train.name={norm}",
        f"train.out_dir={out}", "train.threads=1", "log.every=1", f"log.eval_every={steps}",
        f"log.grad_norm_every={steps}"])
    run = normlab.train(cfg, overwrite=True)
    tokens = cfg["train.batch_size"] * cfg["train.context"]
    rate = run.metrics["tokens_per_s"][10:]
    return float(np.median(1000.0 * tokens / rate[np.isfinite(rate)]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    for name, params, forward in PAIRS.values():
        normlab.register_norm(name, params, forward)
    times = {n: [] for pair in PAIRS.items() for n in (pair[0], pair[1][0])}
    with tempfile.TemporaryDirectory() as out:
        for _ in range(args.reps):
            for norm in times:
                times[norm].append(step_ms(norm, args.steps, out))
    print(f"{'norm':10s} {'built-in ms':>12s} {'Python ms':>10s} {'ratio':>6s}   (median of {args.reps}, "
          f"{args.steps} steps each)")
    for builtin, (python, _, _) in PAIRS.items():
        b, p = statistics.median(times[builtin]), statistics.median(times[python])
        print(f"{builtin:10s} {b:12.2f} {p:10.2f} {p / b:6.2f}")


if __name__ == "__main__":
    main()
