#!/usr/bin/python3
"""PyTorch nn.Transformer at the size of an encoder_decoder config, timed as `normlab bench train`.

  torch_seq2seq_reference.py CONFIG.toml [section.key=value ...] [--steps N] [--warmup W] [--threads T]
                             [--autocast none|bf16] [--json] [--print-loss]
      e.g. bench/configs/translation.toml (issue 51). The model: torch.nn.Transformer (batch_first,
      norm_first when model.norm_placement = "pre", its encoder and decoder final LayerNorms kept
      for pre-LN and dropped otherwise, ReLU FFN, dropout model.dropout), one embedding table
      (vocab x d, normal(0, d^-1/2) as fairseq) shared by source, target and the output
      projection, scaled by sqrt(d) when model.embedding_scale = "sqrt_d", sinusoidal positions in
      normlab's layout (nn/transformer.cpp sinusoidal_positions), a causal decoder mask, no padding,
      nn.CrossEntropyLoss(label_smoothing=model.label_smoothing), torch.optim.Adam(betas=(beta1, beta2)).
      Vocabulary = data.copy_vocab + 3 (PAD, BOS, EOS, data/seq2seq.h). Batches are synthetic
      reverse pairs as data.source = "seq2seq_reverse": sources of data.copy_length words + EOS,
      decoder inputs BOS + the reversed source, targets the reversed source + EOS.
      A step: forward + loss, backward, the global gradient norm (clipped when optim.grad_clip > 0),
      optimizer step, zero_grad(set_to_none), as bench/torch_reference.py. W untimed then N timed
      steps; prints median/min/max ms per step, target tokens/s (B x T, as normlab), peak RSS;
      --print-loss also the first step's loss (about ln(vocab) at initialisation).

Run with the venv that `bench/compare --torch venv` makes (build/torch-venv/bin/python) or Debian's
/usr/bin/python3 with python3-torch.
"""
import argparse
import json
import math
import os
import resource
import statistics
import sys
import time


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blas_threads  # noqa: E402

blas_threads.pin_from_argv()
import torch  # noqa: E402
from torch import nn  # noqa: E402

import torch_model as tm  # noqa: E402  (load_config: defaults, file, overrides)


def sinusoidal_positions(t, c):
    """nn/transformer.cpp: channel j has frequency 10000^-(j - j % 2)/c; sin on even j, cos on odd."""
    j = torch.arange(c, dtype=torch.float64)
    angle = torch.arange(t, dtype=torch.float64)[:, None] * torch.pow(10000.0, -(j - j % 2) / c)
    return torch.where(j % 2 == 0, torch.sin(angle), torch.cos(angle)).float()  # (T, C)


class Seq2SeqTransformer(nn.Module):
    def __init__(self, m, vocab):
        super().__init__()
        d, pre = m["d_model"], m["norm_placement"] == "pre"
        self.emb = nn.Embedding(vocab, d)
        self.transformer = nn.Transformer(
            d_model=d, nhead=m["n_heads"], num_encoder_layers=m.get("encoder_layers", 0) or m["n_layers"],
            num_decoder_layers=m["n_layers"], dim_feedforward=m["d_ff"], dropout=m["dropout"],
            activation="relu", layer_norm_eps=m["norm_eps"], batch_first=True, norm_first=pre)
        if not pre:  # post-LN: no final norms (normlab's placement_has_final_norm)
            self.transformer.encoder.norm = None
            self.transformer.decoder.norm = None
        nn.init.normal_(self.emb.weight, 0.0, d ** -0.5)  # after nn.Transformer's own xavier init
        self.scale = math.sqrt(d) if m["embedding_scale"] == "sqrt_d" else 1.0
        self.register_buffer("positions", sinusoidal_positions(m["context_length"], d), persistent=False)
        t = m["context_length"]  # causal mask: -inf above the diagonal (torch >= 2 detects it as causal)
        self.register_buffer("causal", torch.triu(torch.full((t, t), float("-inf")), 1), persistent=False)
        self.loss_fn = nn.CrossEntropyLoss(label_smoothing=m.get("label_smoothing", 0.0), ignore_index=-1)

    def embed(self, ids):
        return self.emb(ids) * self.scale + self.positions[:ids.size(1)]

    def loss(self, sources, inputs, targets):
        t = inputs.size(1)
        x = self.transformer(self.embed(sources), self.embed(inputs), tgt_mask=self.causal[:t, :t])
        logits = x @ self.emb.weight.t()  # tied output projection, no bias
        return self.loss_fn(logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1))


def reverse_batch(gen, b, length, words):
    """seq2seq_reverse pairs of `length` words (ids 0..words-1); PAD = words, BOS = +1, EOS = +2."""
    src = torch.randint(0, words, (b, length), generator=gen)
    tgt = src.flip(1)
    bos, eos = torch.full((b, 1), words + 1), torch.full((b, 1), words + 2)
    return torch.cat([src, eos], 1), torch.cat([bos, tgt], 1), torch.cat([tgt, eos], 1)


def train_step(model, optimizer, params, clip, batch, autocast):
    if autocast is None:
        loss = model.loss(*batch)
    else:  # --autocast bf16: float32 weights, the autocast op list in bfloat16 (forward only)
        with torch.autocast(device_type="cpu", dtype=autocast):
            loss = model.loss(*batch)
    loss.backward()
    grads = [p.grad for p in params if p.grad is not None]
    norm = math.sqrt(sum(float(torch.linalg.vector_norm(g)) ** 2 for g in grads))
    if clip > 0 and math.isfinite(norm) and norm > clip:
        for g in grads:
            g.mul_(clip / norm)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()


def run_timing(args, config):
    m, o, t, d = config["model"], config["optim"], config["train"], config["data"]
    b, length, words = t["batch_size"], d["copy_length"], d["copy_vocab"]
    vocab = words + 3
    if length + 1 > min(t["context"], m["context_length"]):
        raise SystemExit(f"data.copy_length {length} + 1 does not fit in the context")
    torch.manual_seed(m["seed"])
    model = Seq2SeqTransformer(m, vocab).train()
    params = list(model.parameters())
    optimizer = torch.optim.Adam(params, lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"],
                                 weight_decay=o["weight_decay"])
    autocast = torch.bfloat16 if args.autocast == "bf16" else None
    gen = torch.Generator().manual_seed(t["seed"])
    count = min(args.warmup + args.steps, 16)
    batches = [reverse_batch(gen, b, length, words) for _ in range(count)]
    losses, ms = [], []
    for step in range(args.warmup + args.steps):
        start = time.perf_counter()
        losses.append(train_step(model, optimizer, params, o["grad_clip"], batches[step % count], autocast))
        if step >= args.warmup:
            ms.append((time.perf_counter() - start) * 1e3)
    median, tokens = statistics.median(ms), b * (length + 1)
    out = {"framework": "torch", "model": "nn.Transformer", "config": args.config,
           "threads": torch.get_num_threads(), "batch": b, "context": length + 1,
           "encoder_layers": model.transformer.encoder.num_layers, "decoder_layers": m["n_layers"],
           "d_model": m["d_model"], "heads": m["n_heads"], "vocab": vocab, "params": sum(p.numel() for p in params),
           "optimizer": "adam", "steps": args.steps, "warmup": args.warmup, "median_ms": median,
           "min_ms": min(ms), "max_ms": max(ms), "tokens_per_s": tokens / (median * 1e-3),
           "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
           "first_loss": losses[0], "final_loss": losses[-1], "torch_version": torch.__version__,
           "autocast": args.autocast}
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"torch {torch.__version__} seq2seq bench: {args.config}  enc={out['encoder_layers']} "
          f"dec={m['n_layers']} C={m['d_model']} H={m['n_heads']} V={vocab} B={b} S=T={length + 1}  "
          f"{out['params']} params  adam  threads {out['threads']}  nn.Transformer  autocast {args.autocast}")
    print(f"  step time   median {median:.2f} ms   min {min(ms):.2f}   max {max(ms):.2f}   "
          f"({args.steps} timed, {args.warmup} warm-up)")
    print(f"  throughput  {out['tokens_per_s']:.0f} tokens/s")
    print(f"  peak RSS    {out['peak_rss_mib']:.1f} MiB")
    if args.print_loss:
        print(f"  first loss  {losses[0]:.4f}   (ln V = {math.log(vocab):.4f})")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("positional", nargs="+", help="CONFIG.toml, then section.key=value overrides")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="default: train.threads (0 = torch's)")
    parser.add_argument("--autocast", default="none", choices=("none", "bf16"),
                        help="bf16: forward and loss under torch.autocast(dtype=bfloat16)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--print-loss", action="store_true", help="print the first step's loss")
    args = parser.parse_intermixed_args()
    if args.steps < 1 or args.warmup < 0:
        parser.error("--steps must be >= 1 and --warmup >= 0")
    args.config = next((p for p in args.positional if "=" not in p), None)
    if args.config is None:
        parser.error("a CONFIG.toml is needed")
    config = tm.load_config(args.config, [p for p in args.positional if "=" in p])
    if config["model"].get("arch") != "encoder_decoder":
        parser.error(f"{args.config}: model.arch must be \"encoder_decoder\"")
    threads = args.threads or config["train"]["threads"]
    if threads > 0:
        torch.set_num_threads(threads)
        torch.set_num_interop_threads(1)
    return run_timing(args, config)


if __name__ == "__main__":
    sys.exit(main())
