#!/usr/bin/env python3
"""Compares the training-loss curves of two runs of the same config (scripts/cuda_check).

    compare_loss_curves.py TOLERANCE RUN_A RUN_B

Reads each run's metrics.jsonl, takes the steps both logged, and prints how many, the final losses
and the largest |a - b|. Exits 0 when at least 30 steps are shared, every loss is finite and the
largest gap is within TOLERANCE nats; 1 otherwise (the reason printed); 2 on unreadable input.
"""
import json
import math
import sys


def train_losses(run_dir):
    path = f"{run_dir}/metrics.jsonl"
    try:
        with open(path) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    except (OSError, json.JSONDecodeError) as e:
        print(f"compare_loss_curves: cannot read {path}: {e}")
        sys.exit(2)
    return {r["step"]: r["train_loss"] for r in rows if "train_loss" in r}


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    tolerance, a_dir, b_dir = float(sys.argv[1]), sys.argv[2], sys.argv[3]
    a, b = train_losses(a_dir), train_losses(b_dir)
    steps = sorted(set(a) & set(b))
    if len(steps) < 30:
        print(f"only {len(steps)} steps logged by both runs (need 30)")
        sys.exit(1)
    if not all(math.isfinite(a[s]) and math.isfinite(b[s]) for s in steps):
        print("a loss is not finite")
        sys.exit(1)
    gap, worst = max((abs(a[s] - b[s]), s) for s in steps)
    print(f"{len(steps)} logged steps; final train loss {a[steps[-1]]:.4f} ({a_dir.rsplit('/', 1)[-1]}), "
          f"{b[steps[-1]]:.4f} ({b_dir.rsplit('/', 1)[-1]}); max |a - b| {gap:.4f} at step {worst} "
          f"(tolerance {tolerance})")
    sys.exit(0 if gap <= tolerance else 1)


if __name__ == "__main__":
    main()
