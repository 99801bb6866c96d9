#!/usr/bin/python3
"""The body of bench/compare (which installs and builds first): runs `normlab bench train` and
bench/torch_reference.py alternately on each config and thread count and prints a table.

Each normlab run also writes its resolved config (--resolved-config), vocabulary from the dataset
included, and the torch run reads that file: both frameworks build exactly the same shapes.
Per (config, threads): normlab and torch median ms/step = the median over repetitions of each
run's median; ratio = torch ms / normlab ms per repetition pair (> 1: normlab is faster), shown
as min / median / max over the repetitions.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = {
    "char_small": "experiments/configs/char_small.toml",
    "mid": "bench/configs/mid.toml",
    "deep_narrow": "bench/configs/deep_narrow.toml",
    "gpt2_124m": "bench/configs/gpt2_124m.toml",
}


def run_json(cmd, env=None):
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"bench/compare: failed ({result.returncode}): {' '.join(cmd)}\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--normlab", default=os.path.join(ROOT, "build", "normlab"))
    p.add_argument("--quick", action="store_true", help="2 timed steps, 1 warm-up, 1 repetition")
    p.add_argument("--reps", type=int, default=None, help="repetitions (default 3; --quick 1)")
    p.add_argument("--steps", type=int, default=None, help="timed steps per run (default 10; --quick 2)")
    p.add_argument("--warmup", type=int, default=None, help="warm-up steps per run (default 3; --quick 1)")
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    p.add_argument("--configs", default=",".join(CONFIGS), help="subset of " + ",".join(CONFIGS))
    p.add_argument("--out", help="also append every run's JSON line to this file")
    a = p.parse_args()
    reps = a.reps or (1 if a.quick else 3)
    steps = a.steps or (2 if a.quick else 10)
    warmup = a.warmup if a.warmup is not None else (1 if a.quick else 3)
    threads = [int(t) for t in a.threads.split(",")]
    names = a.configs.split(",")
    for name in names:
        if name not in CONFIGS:
            sys.exit(f"bench/compare: unknown config '{name}'; known: {', '.join(CONFIGS)}")
    out = open(a.out, "a") if a.out else None
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            for t in threads:
                resolved = os.path.join(tmp, f"{name}_{t}.toml")
                ours, theirs = [], []
                for rep in range(reps):
                    common = ["--steps", str(steps), "--warmup", str(warmup), "--threads", str(t), "--json"]
                    n = run_json([a.normlab, "bench", "train", CONFIGS[name], *common,
                                  "--resolved-config", resolved])
                    # PyTorch (Debian's links OpenBLAS) runs the GEMM kernels normlab chose
                    # (core/cpu/blas_core.h): on a CPU OpenBLAS does not know, both get the same.
                    env = dict(os.environ, OPENBLAS_CORETYPE=n["blas_core"])
                    r = run_json(["/usr/bin/python3", "bench/torch_reference.py", resolved, *common], env)
                    for record in (n, r):
                        record.update(bench_config=name, rep=rep)
                        if out:
                            out.write(json.dumps(record) + "\n")
                    ours.append(n)
                    theirs.append(r)
                    print(f"  {name:<12} threads {t} rep {rep}: normlab {n['median_ms']:9.2f} ms   "
                          f"torch {r['median_ms']:9.2f} ms", file=sys.stderr, flush=True)
                ratios = [r["median_ms"] / n["median_ms"] for n, r in zip(ours, theirs)]
                rows.append((name, t, statistics.median(x["median_ms"] for x in ours),
                             statistics.median(x["median_ms"] for x in theirs), min(ratios),
                             statistics.median(ratios), max(ratios), ours[-1]["tokens_per_s"],
                             theirs[-1]["tokens_per_s"]))
    print(f"\n{reps} repetition(s) x {steps} timed steps ({warmup} warm-up); ratio = torch ms / normlab ms")
    print(f"{'config':<12} {'threads':>7} {'normlab ms':>11} {'torch ms':>10} {'ratio min':>10} "
          f"{'median':>8} {'max':>8}")
    for name, t, nm, tm_, lo, mid, hi, _, _ in rows:
        print(f"{name:<12} {t:>7} {nm:>11.2f} {tm_:>10.2f} {lo:>10.3f} {mid:>8.3f} {hi:>8.3f}")
    if out:
        out.close()


if __name__ == "__main__":
    main()
