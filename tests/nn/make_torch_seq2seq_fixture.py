#!/usr/bin/env python3
"""Writes tests/nn/data/torch_seq2seq.txt: an independent reference for normlab's
model.arch = "encoder_decoder" (tests/nn/encoder_decoder_parity_test.cpp), computed by PyTorch.

The model is fairseq's Transformer with share_all_embeddings, assembled from
torch.nn.TransformerEncoderLayer / TransformerDecoderLayer (batch_first, relu, dropout 0) in float64:
  memory = [LN](EncoderLayers(E[src] * sqrt(C) + PE[:S]), src_key_padding_mask)
  y      = [LN](DecoderLayers(E[ids] * sqrt(C) + PE[:T], memory, causal tgt_mask,
                              memory_key_padding_mask))
  logits = y E^T,  loss = mean cross-entropy over targets != -1
([LN]: the final norms, pre only; nn.Transformer would always add them, so the stacks are built
here). PE is normlab's sinusoidal_positions: PE[p, j] = sin/cos(p * 10000^(-(j - j % 2) / C)) for
even/odd j. Every parameter is drawn at random (seeded), biases and norm gains included.

The file is plain text, one record a line: `<key> <n> <n values>`, keys
  inputs.sources / inputs.source_padding / inputs.ids / inputs.targets   (B x S or B x T, row-major)
  <placement>.param.<normlab name>   <placement>.grad.<normlab name>
  <placement>.logits (B x T x V)     <placement>.loss
with torch's names mapped to normlab's (in_proj_weight (3C, C) split into q, k, v; self_attn ->
attn, multihead_attn -> cross_attn, linear1/2 -> ffn.w1/w2, norm1..3 as they are, the final norms
encoder_norm / decoder_norm, the shared embedding tok_emb). Needs torch (Debian's python3-torch 1.13
works); CI only reads the committed file.
  python3 tests/nn/make_torch_seq2seq_fixture.py
"""
import math
import os
import re

import torch
import torch.nn.functional as F

V, C, H, FF, L, B, S, T = 11, 8, 2, 16, 2, 2, 5, 4
PAD = 1
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data", "torch_seq2seq.txt")


def sinusoidal(t, c):
    pe = torch.zeros(t, c, dtype=torch.float64)
    for p in range(t):
        for j in range(c):
            angle = p * math.pow(10000.0, -(j - j % 2) / c)
            pe[p, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return pe


class Seq2Seq(torch.nn.Module):
    def __init__(self, pre):
        super().__init__()
        kw = dict(d_model=C, nhead=H, dim_feedforward=FF, dropout=0.0, activation="relu", batch_first=True,
                  norm_first=pre, dtype=torch.float64)
        self.emb = torch.nn.Embedding(V, C, dtype=torch.float64)
        self.enc = torch.nn.ModuleList([torch.nn.TransformerEncoderLayer(**kw) for _ in range(L)])
        self.dec = torch.nn.ModuleList([torch.nn.TransformerDecoderLayer(**kw) for _ in range(L)])
        self.enc_norm = torch.nn.LayerNorm(C, dtype=torch.float64) if pre else None
        self.dec_norm = torch.nn.LayerNorm(C, dtype=torch.float64) if pre else None

    def embed(self, ids):
        return self.emb(ids) * math.sqrt(C) + sinusoidal(ids.shape[1], C)

    def forward(self, ids, sources, pad):
        x = self.embed(sources)
        for layer in self.enc:
            x = layer(x, src_key_padding_mask=pad)
        if self.enc_norm is not None:
            x = self.enc_norm(x)
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True = hidden
        y = self.embed(ids)
        for layer in self.dec:
            y = layer(y, x, tgt_mask=causal, memory_key_padding_mask=pad)
        if self.dec_norm is not None:
            y = self.dec_norm(y)
        return y @ self.emb.weight.t()


def randomize(model, gen):
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name and name.endswith("weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
            elif p.dim() == 1:
                p.copy_(0.1 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
            else:
                p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) / math.sqrt(p.shape[1]))


def normlab_names(torch_name, tensor):
    """(normlab name, tensor) pairs for one torch parameter (in_proj split into q, k, v)."""
    name = "tok_emb.weight" if torch_name == "emb.weight" else torch_name
    for pattern, replacement in [(r"^enc_norm\.", "encoder_norm."), (r"^dec_norm\.", "decoder_norm."),
                                 (r"^enc\.", "encoder."), (r"^dec\.", "decoder."), (r"\.self_attn\.", ".attn."),
                                 (r"\.multihead_attn\.", ".cross_attn."), (r"\.out_proj\.", ".o."),
                                 (r"\.linear1\.", ".ffn.w1."), (r"\.linear2\.", ".ffn.w2.")]:
        name = re.sub(pattern, replacement, name)
    if ".in_proj_" in name:
        stem, leaf = name.split(".in_proj_")
        return [(f"{stem}.{part}.{leaf}", chunk) for part, chunk in zip("qkv", tensor.chunk(3, dim=0))]
    return [(name, tensor)]


def record(lines, key, values):
    flat = [float(v) for v in values.reshape(-1).tolist()] if torch.is_tensor(values) else list(values)
    lines.append(f"{key} {len(flat)} " + " ".join(repr(v) for v in flat))


def main():
    gen = torch.Generator().manual_seed(37)
    sources = torch.randint(2, V, (B, S), generator=gen)
    pad = torch.zeros(B, S, dtype=torch.bool)
    pad[1, 3:] = True  # the second source is 3 tokens long
    sources[pad] = PAD
    ids = torch.randint(0, V, (B, T), generator=gen)
    targets = torch.randint(0, V, (B, T), generator=gen)
    targets[1, 3] = -1  # one ignored target
    lines = ["# torch.nn.Transformer{Encoder,Decoder}Layer reference for normlab's encoder_decoder model;"
             " written by tests/nn/make_torch_seq2seq_fixture.py (torch " + torch.__version__ + ")"]
    record(lines, "inputs.sources", sources)
    record(lines, "inputs.source_padding", pad.to(torch.int64))
    record(lines, "inputs.ids", ids)
    record(lines, "inputs.targets", targets)
    for placement, pre in [("post", False), ("pre", True)]:
        model = Seq2Seq(pre)
        randomize(model, gen)
        logits = model(ids, sources, pad)
        loss = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), ignore_index=-1)
        loss.backward()
        for name, p in model.named_parameters():
            for mapped, value in normlab_names(name, p.detach()):
                record(lines, f"{placement}.param.{mapped}", value)
            for mapped, grad in normlab_names(name, p.grad):
                record(lines, f"{placement}.grad.{mapped}", grad)
        record(lines, f"{placement}.logits", logits.detach())
        record(lines, f"{placement}.loss", loss.detach().reshape(1))
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
