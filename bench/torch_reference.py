#!/usr/bin/python3
"""PyTorch reference for `normlab bench train`: the same model, optimizer and batch shape from the
same TOML config (bench/torch_model.py), timed the same way, and a cross-framework gradient check.

  torch_reference.py CONFIG.toml [section.key=value ...] [--steps N] [--warmup W] [--threads T] [--json]
                     [--variant fused|mirror|nanogpt] [--autocast none|bf16]
      W untimed then N timed steps (forward + loss, backward, gradient norm / clipping, optimizer
      step, zero_grad(set_to_none), as normlab); random ids of model.vocab_size (set it, or pass
      the --resolved-config that `normlab bench train` writes, which holds the dataset's vocab).
      Prints median/min/max ms per step, tokens/s, GFLOP/s (normlab's formula:
      6 N B T + 12 L B T^2 C), peak RSS (ru_maxrss; includes the ~100+ MiB of libtorch itself).
      --variant (bench/torch_fast_model.py): fused (default; one QKV Linear, SDPA where torch has
      it), mirror (bench/torch_model.py, normlab's layout), nanogpt (a nanoGPT-style cross-check).

  torch_reference.py [CONFIG.toml] --load-grads FILE.safetensors [--tol X]
      Loads the parameters and batch of a `normlab grads` dump (config: CONFIG, else the dump's
      "config" metadata), computes the loss and gradients in PyTorch in the dump's dtype and prints
      max |torch - normlab| and that over max |normlab grad| per parameter. Exit 1 if any relative
      difference exceeds --tol (default 1e-9 for float64 dumps, 1e-4 for float32).

  torch_reference.py [CONFIG.toml] --load-grads FILE --losses N
      Trains N steps on the dump's batch from its parameters and prints the loss before each update
      (compare: normlab bench train CONFIG --losses-from FILE --steps N).

Run with Debian's /usr/bin/python3 and python3-torch (apt-get install -y python3-torch), or with a
current PyTorch from the venv that `bench/compare --torch venv` creates (build/torch-venv/bin/python).
"""
import argparse
import json
import math
import os
import resource
import statistics
import struct
import sys
import time


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blas_threads  # noqa: E402

blas_threads.pin_from_argv()
import numpy as np  # noqa: E402
import torch  # noqa: E402

import torch_fast_model as fast  # noqa: E402
import torch_model as tm  # noqa: E402

ST_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I32": np.int32, "I64": np.int64,
             "BF16": np.uint16}


def read_safetensors(path):
    """({name: numpy array}, metadata) of a safetensors file (io/safetensors.h)."""
    with open(path, "rb") as f:
        data = f.read()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + header_len])
    body = data[8 + header_len:]
    metadata = header.pop("__metadata__", {}) or {}
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        array = np.frombuffer(body[begin:end], dtype=ST_DTYPES[info["dtype"]]).reshape(info["shape"])
        if info["dtype"] == "BF16":
            array = (array.astype(np.uint32) << 16).view(np.float32)
        tensors[name] = array
    return tensors, metadata


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def train_step(model, optimizer, params, config, ids, targets, step, autocast=None):
    lr = tm.learning_rate(config["schedule"], config["optim"]["lr"], step, config["train"]["steps"])
    for group in optimizer.param_groups:
        group["lr"] = lr
    if autocast is None:
        loss = model.loss(ids, targets)
    else:  # --autocast bf16: float32 weights, the autocast op list in bfloat16 (forward only)
        with torch.autocast(device_type=ids.device.type, dtype=autocast):
            loss = model.loss(ids, targets)
    loss.backward()
    # optim/clip.cpp: the norm is always measured (the trainer logs it); clipping scales by
    # max_norm / norm exactly (torch.nn.utils.clip_grad_norm_ adds 1e-6 to the norm).
    clip = config["optim"]["grad_clip"]
    grads = [p.grad for p in params if p.grad is not None]
    norm = math.sqrt(sum(float(torch.linalg.vector_norm(g)) ** 2 for g in grads))
    if clip > 0 and math.isfinite(norm) and norm > clip:
        for g in grads:
            g.mul_(clip / norm)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()


def build(config, dtype=None, device=None, variant="mirror"):
    m = config["model"]
    model = fast.build_variant(variant, m)
    if (dtype or m["dtype"]) == "float64":
        model = model.double()
    if device is not None:
        model = model.to(device)  # before the optimizer is made, as normlab's Module::to
    model.train()
    return model, tm.make_optimizer(model, config["optim"])


def run_timing(args, config):
    m, t = config["model"], config["train"]
    b, ctx = t["batch_size"], t["context"]
    # train.device = "cuda" runs on the GPU (the step ends in loss.item(), which waits for it)
    device = torch.device(t.get("device", "cpu"))
    model, optimizer = build(config, device=device, variant=args.variant)
    autocast = torch.bfloat16 if args.autocast == "bf16" else None
    params = list(model.parameters())
    gen = torch.Generator().manual_seed(t["seed"])
    count = min(args.warmup + args.steps, 16)
    batches = [(torch.randint(0, m["vocab_size"], (b, ctx), generator=gen).to(device),
                torch.randint(0, m["vocab_size"], (b, ctx), generator=gen).to(device)) for _ in range(count)]
    step = 0
    for _ in range(args.warmup):
        train_step(model, optimizer, params, config, *batches[step % count], step, autocast)
        step += 1
    ms, loss = [], 0.0
    for _ in range(args.steps):
        start = time.perf_counter()
        loss = train_step(model, optimizer, params, config, *batches[step % count], step, autocast)
        ms.append((time.perf_counter() - start) * 1e3)
        step += 1
    median = statistics.median(ms)
    n_mm = tm.matmul_parameter_count(model)
    flops = 6.0 * n_mm * b * ctx + 12.0 * m["n_layers"] * b * ctx * ctx * m["d_model"]
    out = {"framework": "torch", "config": args.config, "threads": torch.get_num_threads(), "batch": b,
           "context": ctx, "layers": m["n_layers"], "d_model": m["d_model"], "heads": m["n_heads"],
           "vocab": m["vocab_size"], "params": sum(p.numel() for p in params), "matmul_params": n_mm,
           "optimizer": config["optim"]["name"], "device": str(device), "steps": args.steps, "warmup": args.warmup,
           "median_ms": median, "min_ms": min(ms), "max_ms": max(ms),
           "tokens_per_s": b * ctx / (median * 1e-3), "flops_per_step": flops,
           "gflops": flops / (median * 1e-3) / 1e9, "peak_rss_mib": peak_rss_mib(), "final_loss": loss,
           "torch_version": torch.__version__, "variant": args.variant, "autocast": args.autocast,
           "sdpa": fast.HAS_SDPA}
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"torch {torch.__version__} bench: {args.config}  L={m['n_layers']} C={m['d_model']} "
          f"H={m['n_heads']} V={m['vocab_size']} B={b} T={ctx}  {out['params']} params ({n_mm} in matmuls)  "
          f"{config['optim']['name']}  threads {out['threads']}  variant {args.variant}"
          f"{' (SDPA)' if fast.HAS_SDPA and args.variant != 'mirror' else ''}  autocast {args.autocast}")
    print(f"  step time   median {median:.2f} ms   min {min(ms):.2f}   max {max(ms):.2f}   "
          f"({args.steps} timed, {args.warmup} warm-up)")
    print(f"  throughput  {out['tokens_per_s']:.0f} tokens/s   {out['gflops']:.2f} GFLOP/s "
          f"({flops / 1e9:.3g} GFLOP/step)")
    print(f"  peak RSS    {out['peak_rss_mib']:.1f} MiB")
    return 0


def load_dump(args, config_from_args):
    tensors, metadata = read_safetensors(args.load_grads)
    if config_from_args is None:
        if "config" not in metadata:
            raise SystemExit(f"{args.load_grads} has no 'config' metadata: pass the CONFIG.toml")
        config_from_args = tm.load_config(text=metadata["config"], overrides=args.overrides)
    config = config_from_args
    emb = tensors["param.tok_emb.weight"]
    config["model"]["vocab_size"] = emb.shape[0]
    dtype = "float64" if emb.dtype == np.float64 else "float32"
    if config["model"]["dropout"] > 0:
        print("warning: model.dropout > 0: the two frameworks draw different masks", file=sys.stderr)
    model, optimizer = build(config, dtype)
    names = {n for n, _ in model.named_parameters()}
    dumped = {k[len("param."):] for k in tensors if k.startswith("param.")}
    if names != dumped:
        raise SystemExit(f"parameter names differ: only in torch {sorted(names - dumped)}, "
                         f"only in the dump {sorted(dumped - names)}")
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.from_numpy(tensors["param." + name].copy()))
    ids = torch.from_numpy(tensors["inputs"].astype(np.int64))
    targets = torch.from_numpy(tensors["targets"].astype(np.int64))
    return config, model, optimizer, tensors, ids, targets, dtype


def run_grads(args, config, model, tensors, ids, targets, dtype):
    loss = model.loss(ids, targets)
    loss.backward()
    ref_loss = float(tensors["loss"].reshape(-1)[0]) if "loss" in tensors else float("nan")
    tol = args.tol if args.tol is not None else (1e-9 if dtype == "float64" else 1e-4)
    print(f"loss  torch {loss.item():.12g}  normlab {ref_loss:.12g}  |diff| {abs(loss.item() - ref_loss):.3e}")
    print(f"{'parameter':<32} {'numel':>9} {'max_abs_diff':>13} {'max_rel_diff':>13}  result  (dtype {dtype})")
    failures, worst = 0, 0.0
    # rel = max |diff| / max(max |normlab grad|, 1e-3 * the largest max |grad| of any parameter): a
    # gradient that is zero analytically (attention's key bias: softmax ignores a per-row constant)
    # holds only rounding noise in both frameworks and is judged against the model's gradient scale.
    floor = 1e-3 * max(np.abs(tensors["grad." + n]).max() for n, _ in model.named_parameters())
    for name, p in model.named_parameters():
        ref = torch.from_numpy(tensors["grad." + name].copy()).to(p.dtype)
        got = p.grad if p.grad is not None else torch.zeros_like(p)
        abs_diff = (got - ref).abs().max().item()
        rel = abs_diff / max(ref.abs().max().item(), floor, 1e-300)
        worst = max(worst, rel)
        ok = rel <= tol
        failures += 0 if ok else 1
        print(f"{name:<32} {p.numel():>9} {abs_diff:>13.3e} {rel:>13.3e}  {'PASS' if ok else 'FAIL'}")
    print(f"{len(list(model.parameters()))} parameters: worst relative difference {worst:.3e} "
          f"(tolerance {tol:.0e}), {failures} over")
    if args.json:
        print(json.dumps({"framework": "torch", "mode": "grads", "worst_rel_diff": worst,
                          "failures": failures, "loss": loss.item(), "normlab_loss": ref_loss}))
    return 1 if failures else 0


def run_losses(args, config, model, optimizer, ids, targets):
    params = list(model.parameters())
    losses = []
    for step in range(args.losses):
        losses.append(train_step(model, optimizer, params, config, ids, targets, step))
        if not args.json:
            print(f"step {step:4d}  loss {losses[-1]:.10f}")
    if args.json:
        print(json.dumps({"framework": "torch", "mode": "losses", "losses": losses}))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("positional", nargs="*", help="CONFIG.toml, then section.key=value overrides")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="default: train.threads (0 = torch's)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--variant", default="fused", choices=("fused", "mirror", "nanogpt"),
                        help="timing model (bench/torch_fast_model.py); gradient checks use mirror")
    parser.add_argument("--autocast", default="none", choices=("none", "bf16"),
                        help="bf16: forward and loss under torch.autocast(dtype=bfloat16)")
    parser.add_argument("--load-grads", metavar="FILE")
    parser.add_argument("--losses", type=int, default=0, metavar="N")
    parser.add_argument("--tol", type=float, default=None)
    args = parser.parse_intermixed_args()
    args.config = next((p for p in args.positional if "=" not in p), None)
    args.overrides = [p for p in args.positional if "=" in p]
    config = tm.load_config(args.config, args.overrides) if args.config else None
    threads = args.threads or (config["train"]["threads"] if config else 0)
    if threads > 0:
        torch.set_num_threads(threads)
        torch.set_num_interop_threads(1)
    if args.load_grads:
        config, model, optimizer, tensors, ids, targets, dtype = load_dump(args, config)
        if args.losses > 0:
            return run_losses(args, config, model, optimizer, ids, targets)
        return run_grads(args, config, model, tensors, ids, targets, dtype)
    if config is None:
        parser.error("a CONFIG.toml is needed (or --load-grads FILE)")
    return run_timing(args, config)


if __name__ == "__main__":
    sys.exit(main())
