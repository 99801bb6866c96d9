"""The fastest PyTorch a user would write for a normlab config, and a nanoGPT-style cross-check.

Used by bench/torch_reference.py --variant (timing only; gradient dumps load into the mirror model
of bench/torch_model.py, whose parameter names are normlab's).

  fused    bench/torch_model.py's model with each attention's q, k, v Linears replaced by one
           (C, 3C) Linear initialised with their concatenated weights (the same function), and the
           attention itself by F.scaled_dot_product_attention(is_causal=True) where the PyTorch
           version has it (>= 2.0); older ones (Debian's 1.13) multiply out the scores with a
           causal mask made once and kept as a buffer. GELU is the tanh form, as normlab's.
  nanogpt  a minimal GPT written in the style of nanoGPT (our own code): fused QKV, exact GELU,
           LayerNorm, tied head; parameters named so that
           bench/torch_model.py's weight-decay rule makes the same AdamW groups; for the plain pre-LN GELU configs only.
           It is the issue's anchor: the reference must not be slower than this.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

import torch_model as tm

HAS_SDPA = hasattr(F, "scaled_dot_product_attention")


def causal_attention(q, k, v, mask):
    """softmax(q k^T / sqrt(D) + causal) v for (B,H,T,D) q, k, v; mask (T_max,T_max) True above."""
    if HAS_SDPA:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    t = q.shape[-2]
    scores = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))  # (B,H,T,T)
    return scores.masked_fill(mask[:t, :t], float("-inf")).softmax(-1) @ v


class FusedAttention(nn.Module):
    """The mirror's Attention with one qkv Linear: qkv.weight = cat(q, k, v) by rows (3C, C)."""

    def __init__(self, mirror, context):
        super().__init__()
        self.heads, self.p = mirror.heads, mirror.p
        c = mirror.q.in_features
        bias = mirror.q.bias is not None
        self.qkv = nn.Linear(c, 3 * c, bias=bias)
        with torch.no_grad():
            self.qkv.weight.copy_(torch.cat([mirror.q.weight, mirror.k.weight, mirror.v.weight]))
            if bias:
                self.qkv.bias.copy_(torch.cat([mirror.q.bias, mirror.k.bias, mirror.v.bias]))
        self.o = mirror.o
        self.register_buffer("mask", torch.ones(context, context, dtype=torch.bool).triu(1), persistent=False)

    def forward(self, x):
        b, t, c = x.shape
        h = self.heads
        q, k, v = self.qkv(x).view(b, t, 3, h, c // h).permute(2, 0, 3, 1, 4)  # 3 x (B,H,T,D)
        y = causal_attention(q, k, v, self.mask)                                # (B,H,T,D)
        y = self.o(y.transpose(1, 2).reshape(b, t, c))
        return F.dropout(y, self.p, self.training)


def fused_model(m):
    model = tm.TransformerLM(m)
    for block in model.blocks:
        block.attn = FusedAttention(block.attn, m["context_length"])
    return model


# ---- nanoGPT-style ----
class GptBlock(nn.Module):
    def __init__(self, c, heads, d_ff, context):
        super().__init__()
        self.heads = heads
        self.norm_1, self.norm_2 = nn.LayerNorm(c), nn.LayerNorm(c)
        self.c_attn, self.attn_proj = nn.Linear(c, 3 * c), nn.Linear(c, c)
        self.c_fc, self.mlp_proj = nn.Linear(c, d_ff), nn.Linear(d_ff, c)
        self.register_buffer("mask", torch.ones(context, context, dtype=torch.bool).triu(1), persistent=False)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(self.norm_1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = causal_attention(q, k, v, self.mask).transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.attn_proj(y)
        return x + self.mlp_proj(F.gelu(self.c_fc(self.norm_2(x))))


class NanoGpt(nn.Module):
    def __init__(self, m):
        super().__init__()
        supported = dict(norm_type="layernorm", norm_placement="pre", ffn_type="gelu", bias=True,
                         tie_embeddings=True, dropout=0.0, embedding_scale="none")
        for key, value in supported.items():
            if m[key] != value:
                raise SystemExit(f"bench/torch_fast_model.py: --variant nanogpt needs model.{key} = {value!r}, "
                                 f"got {m[key]!r}")
        self.m = m
        c = m["d_model"]
        self.tok_emb, self.pos_emb = nn.Embedding(m["vocab_size"], c), nn.Embedding(m["context_length"], c)
        self.blocks = nn.ModuleList(GptBlock(c, m["n_heads"], m["d_ff"], m["context_length"])
                                    for _ in range(m["n_layers"]))
        self.final_norm = nn.LayerNorm(c)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if p.dim() == 2:
                    p.normal_(0.0, 0.02 / math.sqrt(2 * m["n_layers"]) if name.endswith("proj.weight") else 0.02)

    def loss(self, ids, targets):
        x = self.tok_emb(ids) + self.pos_emb(torch.arange(ids.shape[1], device=ids.device))
        for block in self.blocks:
            x = block(x)
        logits = self.final_norm(x) @ self.tok_emb.weight.t()
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-1)


def build_variant(variant, m):
    """The model of --variant for the model config m (every variant has .loss(ids, targets) and .m)."""
    if variant == "mirror":
        return tm.TransformerLM(m)
    if variant == "fused":
        return fused_model(m)
    if variant == "nanogpt":
        return NanoGpt(m)
    raise SystemExit(f"bench/torch_fast_model.py: unknown variant '{variant}' (mirror, fused, nanogpt)")
