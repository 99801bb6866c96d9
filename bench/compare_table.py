#!/usr/bin/python3
"""The body of bench/compare (which installs and builds first): runs `normlab bench train` and
bench/torch_reference.py alternately on each config and thread count and prints a table.

Each normlab run also writes its resolved config (--resolved-config), vocabulary from the dataset
included, and every torch run reads that file: all frameworks build exactly the same shapes.
Order: per config, per repetition, per thread count: normlab, then each PyTorch (python x variant),
so the runs compared are interleaved in time. Per (config, threads): the median over repetitions
of each run's median ms/step; "torch best" = per repetition the fastest PyTorch run; ratio = torch
best / normlab per repetition (> 1: normlab is faster), min / median / max; "x 1 thr" = normlab's
1-thread ms / its ms at this thread count, per repetition, median.
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


PYTHONS = {"system": "/usr/bin/python3", "venv": None}  # venv: --venv's python


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--normlab", default=os.path.join(ROOT, "build", "normlab"))
    p.add_argument("--quick", action="store_true", help="2 timed steps, 1 warm-up, 1 repetition")
    p.add_argument("--reps", type=int, default=None, help="repetitions (default 3; --quick 1)")
    p.add_argument("--steps", type=int, default=None, help="timed steps per run (default 10; --quick 2)")
    p.add_argument("--warmup", type=int, default=None, help="warm-up steps per run (default 3; --quick 1)")
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    p.add_argument("--configs", default=",".join(CONFIGS), help="subset of " + ",".join(CONFIGS))
    p.add_argument("--torch", default="system", help="comma-separated: system (Debian's), venv (PyPI's)")
    p.add_argument("--variants", default="fused,nanogpt", help="torch_reference.py --variant list")
    p.add_argument("--autocast", default="none", choices=("none", "bf16"), help="for every PyTorch run")
    p.add_argument("--precision", default="fp32", choices=("fp32", "bf16", "fp16"),
                   help="normlab's train.precision (compare bf16 with --autocast bf16)")
    p.add_argument("--venv", default=os.path.join(ROOT, "build", "torch-venv"), help="for --torch venv")
    p.add_argument("--out", help="also append every run's JSON line to this file")
    a = p.parse_args()
    PYTHONS["venv"] = os.path.join(a.venv, "bin", "python")
    a.reps = a.reps or (1 if a.quick else 3)
    a.steps = a.steps or (2 if a.quick else 10)
    a.warmup = a.warmup if a.warmup is not None else (1 if a.quick else 3)
    a.threads = [int(t) for t in a.threads.split(",")]
    a.configs = a.configs.split(",")
    for name in a.configs:
        if name not in CONFIGS:
            sys.exit(f"bench/compare: unknown config '{name}'; known: {', '.join(CONFIGS)}")
    a.torch_runs = [(py, v) for py in a.torch.split(",") for v in a.variants.split(",")]
    for py, _ in a.torch_runs:
        if py not in PYTHONS:
            sys.exit(f"bench/compare: unknown --torch '{py}'; known: {', '.join(PYTHONS)}")
    return a


def one_round(a, name, t, resolved):
    """normlab, then every PyTorch run, once: (normlab record, [torch records])."""
    common = ["--steps", str(a.steps), "--warmup", str(a.warmup), "--threads", str(t), "--json"]
    n = run_json([a.normlab, "bench", "train", CONFIGS[name], f"train.precision={a.precision}", *common,
                  "--resolved-config", resolved])
    # Debian's PyTorch links OpenBLAS: it runs the GEMM kernels normlab chose (core/cpu/blas_core.h).
    env = dict(os.environ, OPENBLAS_CORETYPE=n["blas_core"])
    theirs = [run_json([PYTHONS[py], "bench/torch_reference.py", resolved, *common, "--variant", v,
                        "--autocast", a.autocast], env) for py, v in a.torch_runs]
    return n, theirs


def main():
    a = parse_args()
    out = open(a.out, "a") if a.out else None
    labels = [f"{py}-{v}" for py, v in a.torch_runs]
    rows = []
    first_normlab = None
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.configs:
            runs = {t: [] for t in a.threads}  # threads -> [(normlab, [torch])] per repetition
            for rep in range(a.reps):
                for t in a.threads:
                    n, theirs = one_round(a, name, t, os.path.join(tmp, f"{name}_{t}.toml"))
                    runs[t].append((n, theirs))
                    first_normlab = first_normlab or n
                    for record in (n, *theirs):
                        record.update(bench_config=name, rep=rep)
                        if out:
                            out.write(json.dumps(record) + "\n")
                    print(f"  {name:<12} threads {t} rep {rep}: normlab {n['median_ms']:9.2f} ms   " +
                          "   ".join(f"{lab} {r['median_ms']:9.2f}" for lab, r in zip(labels, theirs)),
                          file=sys.stderr, flush=True)
            base = runs[a.threads[0]]
            for t in a.threads:
                ours = [n["median_ms"] for n, _ in runs[t]]
                per_torch = [[th[i]["median_ms"] for _, th in runs[t]] for i in range(len(labels))]
                best = [min(th["median_ms"] for th in theirs) for _, theirs in runs[t]]
                ratios = [b / o for b, o in zip(best, ours)]
                scaling = [b[0]["median_ms"] / o for b, o in zip(base, ours)]
                rows.append((name, t, statistics.median(ours), statistics.median(scaling),
                             [statistics.median(x) for x in per_torch], statistics.median(best),
                             min(ratios), statistics.median(ratios), max(ratios)))
    print(f"\nnormlab: blas {first_normlab.get('blas', first_normlab['blas_core'])}; fp32 GEMM "
          f"{first_normlab.get('f32_gemm', '-')}; half GEMM {first_normlab.get('half_gemm', '-')}")
    print(f"{a.reps} repetition(s) x {a.steps} timed steps ({a.warmup} warm-up); autocast {a.autocast}; normlab precision {a.precision}; "
          f"ratio = fastest torch ms / normlab ms; x {a.threads[0]} thr = normlab speed-up over its "
          f"{a.threads[0]}-thread time")
    print(f"{'config':<12} {'threads':>7} {'normlab ms':>11} {'x ' + str(a.threads[0]) + ' thr':>8} " +
          " ".join(f"{lab:>14}" for lab in labels) + f" {'torch best':>10} {'ratio min':>9} {'median':>7} {'max':>7}")
    for name, t, nm, sc, tms, best, lo, mid, hi in rows:
        print(f"{name:<12} {t:>7} {nm:>11.2f} {sc:>8.2f} " + " ".join(f"{x:>14.2f}" for x in tms) +
              f" {best:>10.2f} {lo:>9.3f} {mid:>7.3f} {hi:>7.3f}")
    if out:
        out.close()


if __name__ == "__main__":
    main()
