"""A new norm in Python, from definition to Xiong's experiment (docs/python.md, "A new norm").

Dynamic Tanh (Zhu et al. 2025) defined from normlab.ops, then: its gradient check, the quickstart's
copy task trained Post-LN and Pre-LN with and without warmup, and the per-layer gradient norms at
initialization plotted with matplotlib (when installed). Run from the repository root:

    PYTHONPATH=python:build/python python examples/python/new_norm.py [--steps 400] [--out runs/new_norm]

(or after `pip install .`, without PYTHONPATH). tests: python/tests/test_examples.py runs it short.
"""
import argparse
from pathlib import Path

import numpy as np

import normlab
from normlab import ops

CONFIG = Path(__file__).resolve().parents[2] / "experiments" / "configs" / "quickstart.toml"


# 1. The norm: y = tanh(alpha x) * weight + bias, alpha one learnable scalar (0.5), weight and bias
#    per channel (bias only when model.bias). p holds the parameters by name, and "eps".
def dynamic_tanh(x, p):
    y = ops.mul(ops.tanh(ops.mul(x, p["alpha"])), p["weight"])
    return ops.add(y, p["bias"]) if "bias" in p else y


def register():
    normlab.register_norm("my_dyt", params={"alpha": 0.5, "weight": "ones", "bias": "zeros"},
                          forward=dynamic_tanh, formula="tanh(alpha x) * weight + bias (from Python)")


# 2. Its gradient check: float64 central differences against backward, for x and every parameter.
def gradient_check():
    rows = normlab.gradcheck_op("norm_my_dyt_composed")
    for r in rows:
        print(f"gradcheck {r.input:7s} max rel error {r.max_rel_error:.1e} ({'passed' if r.passed else 'FAILED'})")
    return rows


# 3. Xiong's four arms on the copy task: placement x warmup.
ARMS = {"post, no warmup": ["model.norm_placement=post", "schedule.warmup_steps=1"],
        "post, warmup 50": ["model.norm_placement=post", "schedule.warmup_steps=50"],
        "pre, no warmup": ["model.norm_placement=pre", "schedule.warmup_steps=1"],
        "pre, warmup 50": ["model.norm_placement=pre", "schedule.warmup_steps=50"]}


def train_arms(steps, out_dir):
    runs = {}
    for arm, overrides in ARMS.items():
        name = "my_dyt-" + arm.replace(", ", "-").replace(" ", "")
        config = normlab.load_config(CONFIG, overrides=overrides + [
            "model.norm_type=my_dyt", f"train.steps={steps}", f"train.name={name}", f"train.out_dir={out_dir}",
            "log.grad_norm_every=" + str(max(1, steps // 4)), "schedule.decay_start=" + str(max(2, steps // 4))])
        runs[arm] = normlab.train(config)
        loss = runs[arm].metrics["val_loss"]
        print(f"{arm:16s} {runs[arm].status:9s} final validation loss {loss[np.isfinite(loss)][-1]:.3f}")
    return runs


# 4. The per-layer gradient norm at initialization (grad_norms.csv's first row), as in Xiong's Figure 3.
def layer_profile(run):
    layers = sorted((int(k.split(".")[1]), k) for k in run.grad_norms if k.startswith("layer.") and k.count(".") == 1)
    return [l + 1 for l, _ in layers], [run.grad_norms[k][0] for _, k in layers]


def plot(runs, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return None
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for arm in ("post, no warmup", "pre, no warmup"):
        layers, norms = layer_profile(runs[arm])
        ax.plot(layers, norms, marker="o", label=arm.split(",")[0] + "-DyT")
    ax.set(xlabel="layer", ylabel="gradient norm at init", yscale="log", title="Python-defined DyT")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    print(f"wrote {path}")
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--out", default="runs/new_norm")
    args = parser.parse_args()
    register()
    gradient_check()
    runs = train_arms(args.steps, args.out)
    plot(runs, Path(args.out) / "my_dyt_layers.png")


if __name__ == "__main__":
    main()
