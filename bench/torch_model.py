"""The normlab model, optimizer and schedule rebuilt in PyTorch, from the same TOML config.

Used by bench/torch_reference.py. Everything here mirrors a normlab source file, named in each
docstring; parameter names are normlab's ("blocks.3.attn.q.weight", "tok_emb.weight", ...) so that
a `normlab grads` dump loads by name and the weight-decay exclusion rule sees the same names.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

try:
    import tomllib  # Python >= 3.11
except ImportError:  # pragma: no cover - Debian 11's Python 3.9
    import toml as _toml

    class tomllib:  # noqa: N801 - a stand-in with the two functions used here
        @staticmethod
        def loads(text):
            return _toml.loads(text)

        @staticmethod
        def load(f):
            return _toml.loads(f.read().decode())


# ---- config: config/run_config.h, nn/model_config.h, optim/optimizer.h, optim/schedule.h ----
DEFAULTS = {
    "model": dict(vocab_size=256, d_model=128, n_heads=4, n_layers=4, d_ff=512, context_length=64,
                  n_kv_heads=0, head_dim=0, position_embedding="learned", rope_theta=10000.0,
                  sliding_window=0, padding_idx=-1,
                  norm_type="layernorm", norm_eps=1e-5, norm_groups=4, norm_placement="pre",
                  ffn_type="gelu", bias=True, dropout=0.0, tie_embeddings=True, embedding_scale="none",
                  init="xavier", seed=0,
                  dtype="float32"),
    "optim": dict(name="adamw", lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, momentum=0.0,
                  weight_decay=0.0, decay_norms_and_biases=False, decay_embeddings=False, grad_clip=0.0),
    "schedule": dict(kind="constant", warmup_steps=0, decay_every=1, decay_start=0, decay_factor=1.0, min_lr=0.0),
    "data": dict(source="default", tokenizer="char", val_fraction=0.1, copy_length=16, copy_vocab=64),
    "train": dict(name="run", out_dir="runs", steps=2000, batch_size=12, context=64, seed=1, threads=0,
                  device="cpu"),
    "log": dict(),
}

# nn/presets.cpp: the keys every preset sets, in nn/presets.h preset_keys() order.
PRESET_KEYS = ("norm_placement", "norm_type", "norm_eps", "ffn_type", "bias", "tie_embeddings", "init",
               "embedding_scale", "position_embedding", "rope_theta", "sliding_window")
PRESETS = {
    "gpt1": ("post", "layernorm", 1e-5, "gelu", True, True, "normal", "none", "learned", 10000.0, 0),
    "gpt2": ("pre", "layernorm", 1e-5, "gelu", True, True, "gpt2", "none", "learned", 10000.0, 0),
    "llama": ("pre", "rmsnorm", 1e-6, "swiglu", False, False, "normal", "none", "rope", 10000.0, 0),
    "mistral": ("pre", "rmsnorm", 1e-5, "swiglu", False, False, "normal", "none", "rope", 10000.0, 4096),
    "gemma": ("pre", "rmsnorm_unit_offset", 1e-6, "geglu", False, True, "normal", "sqrt_d", "rope", 10000.0, 0),
}


def _parse_value(text):
    """An override's value as TOML; a bare word is a string (model.norm_placement=post)."""
    try:
        return tomllib.loads("v = " + text)["v"]
    except Exception:
        return text


def load_config(path=None, overrides=(), text=None):
    """The resolved config as {section: {key: value}}: defaults, then the preset, then the file's
    keys, then "section.key=value" overrides (config/config.h). Unknown keys are kept (normlab
    rejects them; this script trusts normlab to have validated the file)."""
    raw = {}
    if text is not None:
        raw = tomllib.loads(text)
    elif path:
        with open(path, "rb") as f:
            raw = tomllib.load(f)
    preset = raw.get("preset", "")
    given = {s: dict(raw.get(s, {})) for s in DEFAULTS}
    for item in overrides:
        key, _, value = item.partition("=")
        if key == "preset":
            preset = _parse_value(value)
            continue
        section, _, name = key.partition(".")
        given.setdefault(section, {})[name] = _parse_value(value)
    config = {s: dict(v) for s, v in DEFAULTS.items()}
    if preset:
        config["model"].update(zip(PRESET_KEYS, PRESETS[preset]))
    for section, values in given.items():
        config.setdefault(section, {}).update(values)
    return config


def learning_rate(schedule, lr_max, step, total_steps):
    """optim/schedule.cpp."""
    kind, warmup = schedule["kind"], schedule["warmup_steps"]
    if step < warmup:
        return lr_max * (step + 1) / warmup
    if kind == "constant":
        return lr_max
    if kind == "inverse_sqrt":
        every = schedule["decay_every"]
        start = max(warmup, schedule["decay_start"], 1)
        start_epochs = max(1.0, start / every)
        factor = schedule["decay_factor"] if step + 1 > start else 1.0
        return lr_max * factor * min(1.0, math.sqrt(start_epochs / (step // every + 1)))
    progress = min(max((step - warmup) / (total_steps - warmup), 0.0), 1.0)
    min_lr = schedule["min_lr"]
    if kind == "linear":
        return lr_max + (min_lr - lr_max) * progress
    return min_lr + 0.5 * (lr_max - min_lr) * (1.0 + math.cos(math.pi * progress))


# ---- model: nn/norms.cpp, nn/attention.cpp, nn/ffn.cpp, nn/block.cpp, nn/transformer.cpp ----
class Norm(nn.Module):
    """normlab Norm over the last axis (C)."""

    def __init__(self, m, dim):
        super().__init__()
        self.type, self.eps, self.groups = m["norm_type"], m["norm_eps"], m["norm_groups"]
        if self.type == "none":
            return
        self.weight = nn.Parameter(torch.full((dim,), 0.0 if self.type == "rmsnorm_unit_offset" else 1.0))
        if m["bias"] and not self.type.startswith("rmsnorm"):
            self.bias = nn.Parameter(torch.zeros(dim))
        else:
            self.bias = None

    def forward(self, x):
        t, c = self.type, x.shape[-1]
        if t == "none":
            return x
        if t == "layernorm":
            return F.layer_norm(x, (c,), self.weight, self.bias, self.eps)
        if t.startswith("rmsnorm"):
            g = 1.0 + self.weight if t == "rmsnorm_unit_offset" else self.weight
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * g
        if t == "groupnorm":
            xg = x.reshape(*x.shape[:-1], self.groups, c // self.groups)
            mean = xg.mean(-1, keepdim=True)
            var = (xg - mean).pow(2).mean(-1, keepdim=True)
            y = ((xg - mean) * torch.rsqrt(var + self.eps)).reshape(x.shape) * self.weight
        else:  # batchnorm: batch statistics per channel over every row
            rows = x.reshape(-1, c)
            y = F.batch_norm(rows, None, None, self.weight, None, True, 0.0, self.eps).reshape(x.shape)
        return y + self.bias if self.bias is not None else y


class Attention(nn.Module):
    def __init__(self, m):
        super().__init__()
        c = m["d_model"]
        self.heads, self.p = m["n_heads"], m["dropout"]
        self.q, self.k, self.v, self.o = (nn.Linear(c, c, bias=m["bias"]) for _ in range(4))

    def forward(self, x):
        b, t, c = x.shape
        h, d = self.heads, c // self.heads
        q, k, v = (f(x).view(b, t, h, d).transpose(1, 2) for f in (self.q, self.k, self.v))  # (B,H,T,D)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(d)                                  # (B,H,T,T)
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        probs = scores.masked_fill(mask, float("-inf")).softmax(-1)
        y = self.o((probs @ v).transpose(1, 2).reshape(b, t, c))
        return F.dropout(y, self.p, self.training)


class FeedForward(nn.Module):
    def __init__(self, m):
        super().__init__()
        c, f = m["d_model"], m["d_ff"]
        self.type, self.p = m["ffn_type"], m["dropout"]
        self.w1 = nn.Linear(c, f, bias=m["bias"])
        self.w2 = nn.Linear(f, c, bias=m["bias"])
        if self.type in ("swiglu", "geglu"):
            self.w3 = nn.Linear(c, f, bias=m["bias"])

    def forward(self, x):
        h = self.w1(x)
        if self.type == "relu":
            h = F.relu(h)
        elif self.type == "gelu":
            h = F.gelu(h, approximate="tanh")
        elif self.type == "swiglu":
            h = F.silu(h) * self.w3(x)
        else:
            h = F.gelu(h, approximate="tanh") * self.w3(x)
        return F.dropout(self.w2(h), self.p, self.training)


class Block(nn.Module):
    """The five placements of nn/block.h; norms registered in the same order and names."""

    def __init__(self, m):
        super().__init__()
        self.placement = m["norm_placement"]
        self.alpha = (2.0 * m["n_layers"]) ** 0.25
        if self.placement != "none":
            self.norm1 = Norm(m, m["d_model"])
            if self.placement == "sandwich":
                self.post_norm1 = Norm(m, m["d_model"])
            self.norm2 = Norm(m, m["d_model"])
            if self.placement == "sandwich":
                self.post_norm2 = Norm(m, m["d_model"])
        self.attn = Attention(m)
        self.ffn = FeedForward(m)

    def forward(self, x):
        p = self.placement
        if p == "post":
            h = self.norm1(x + self.attn(x))
            return self.norm2(h + self.ffn(h))
        if p == "pre":
            h = x + self.attn(self.norm1(x))
            return h + self.ffn(self.norm2(h))
        if p == "none":
            h = x + self.attn(x)
            return h + self.ffn(h)
        if p == "sandwich":
            h = x + self.post_norm1(self.attn(self.norm1(x)))
            return h + self.post_norm2(self.ffn(self.norm2(h)))
        h = self.norm1(self.alpha * x + self.attn(x))  # deepnorm
        return self.norm2(self.alpha * h + self.ffn(h))


class TransformerLM(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m
        plain = dict(n_kv_heads=0, head_dim=0, sliding_window=0, padding_idx=-1)
        for key, value in plain.items():
            if m[key] != value:  # RoPE, GQA, windows: compared with Hugging Face instead (docs/hf_interop.md)
                raise SystemExit(f"bench/torch_model.py models only model.{key} = {value!r}, got {m[key]!r}")
        if m["position_embedding"] not in ("learned", "sinusoidal"):
            raise SystemExit(f"bench/torch_model.py models learned or sinusoidal positions, got {m['position_embedding']!r}")
        self.tok_emb = nn.Embedding(m["vocab_size"], m["d_model"])
        if m["position_embedding"] == "learned":
            self.pos_emb = nn.Embedding(m["context_length"], m["d_model"])
        else:  # the original Transformer's fixed table, as nn/transformer.cpp: sin on even, cos on odd dimensions
            pos = torch.arange(m["context_length"], dtype=torch.float64)[:, None]
            dim = torch.arange(m["d_model"])
            freq = torch.pow(10000.0, -(dim - dim % 2).double() / m["d_model"])
            angle = pos * freq[None, :]
            self.register_buffer("sinusoid", torch.where(dim % 2 == 0, torch.sin(angle), torch.cos(angle)))
            self.pos_emb = None
        self.blocks = nn.ModuleList(Block(m) for _ in range(m["n_layers"]))
        if m["norm_placement"] in ("pre", "sandwich"):
            self.final_norm = Norm(m, m["d_model"])
        else:
            self.final_norm = None
        self.lm_head = None if m["tie_embeddings"] else nn.Linear(m["d_model"], m["vocab_size"], bias=False)
        initialize(self, m)

    def forward(self, ids):
        t = ids.shape[1]
        tokens = self.tok_emb(ids)
        if self.m["embedding_scale"] == "sqrt_d":
            tokens = tokens * math.sqrt(self.m["d_model"])
        if self.pos_emb is not None:
            x = tokens + self.pos_emb(torch.arange(t, device=ids.device))
        else:
            x = tokens + self.sinusoid[:t].to(tokens.dtype)
        x = F.dropout(x, self.m["dropout"], self.training)
        for block in self.blocks:
            x = block(x)
        if self.final_norm is not None:
            x = self.final_norm(x)
        return self.lm_head(x) if self.lm_head is not None else x @ self.tok_emb.weight.t()

    def loss(self, ids, targets):
        logits = self.forward(ids)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-1)


@torch.no_grad()
def initialize(model, m, seed=None):
    """nn/init.cpp's scheme (same distributions; torch's random stream, so not the same values)."""
    gen = torch.Generator().manual_seed(m["seed"] if seed is None else seed)
    layers = max(m["n_layers"], 1)
    beta = (8.0 * m["n_layers"]) ** -0.25
    for name, p in model.named_parameters():
        if p.dim() == 1:
            gain = name.endswith(".weight") and m["norm_type"] != "rmsnorm_unit_offset"
            p.fill_(1.0 if gain else 0.0)
            continue
        if m["init"] == "xavier" and name == "tok_emb.weight" and m["embedding_scale"] == "sqrt_d":
            std = m["d_model"] ** -0.5
        elif m["init"] == "xavier":
            std = math.sqrt(2.0 / (p.shape[0] + p.shape[1]))
        elif m["init"] == "gpt2":
            residual_out = name.endswith("attn.o.weight") or name.endswith("ffn.w2.weight")
            std = 0.02 / math.sqrt(2.0 * layers) if residual_out else 0.02
        else:  # normal
            std = 0.02
        scaled = ("ffn.w1.weight", "ffn.w2.weight", "ffn.w3.weight", "attn.v.weight", "attn.o.weight")
        if m["norm_placement"] == "deepnorm" and name.endswith(scaled):
            std *= beta
        p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * std)


def matmul_parameter_count(model):
    """N of the flop formula (cli/bench_command.cpp)."""
    n = 0
    for name, p in model.named_parameters():
        if p.dim() != 2 or name.startswith("pos_emb"):
            continue
        if name.startswith("tok_emb") and not model.m["tie_embeddings"]:
            continue
        n += p.numel()
    return n


# ---- optimizer: optim/*.cpp ----
def weight_decay_applies(name, o):
    """optim/optimizer.cpp: norms and biases, and embeddings, are excluded unless opted in."""
    is_norm = "norm" in name
    is_bias = name == "bias" or name.endswith(".bias")
    if (is_norm or is_bias) and not o["decay_norms_and_biases"]:
        return False
    if "emb" in name and not o["decay_embeddings"]:
        return False
    return True


def make_optimizer(model, o):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (decay if weight_decay_applies(name, o) else no_decay).append(p)
    groups = [{"params": decay, "weight_decay": o["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}]
    groups = [g for g in groups if g["params"]]
    betas = (o["beta1"], o["beta2"])
    if o["name"] == "adamw":
        return torch.optim.AdamW(groups, lr=o["lr"], betas=betas, eps=o["eps"])
    if o["name"] == "adam":
        return torch.optim.Adam(groups, lr=o["lr"], betas=betas, eps=o["eps"])
    if o["name"] == "radam":
        return torch.optim.RAdam(groups, lr=o["lr"], betas=betas, eps=o["eps"])
    if o["name"] == "sgd":
        return torch.optim.SGD(groups, lr=o["lr"], momentum=o["momentum"])
    raise SystemExit(f"[optim] unknown optimizer '{o['name']}'")
