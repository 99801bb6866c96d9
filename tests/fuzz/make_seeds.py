#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora: <out>/config/ (the repository's configs from
experiments/configs, xiong/configs and bench/configs, each also with overrides after a NUL
byte, as fuzz_config reads them) and <out>/safetensors/ (small valid files of every dtype normlab
reads, with and without metadata, an empty one, a zero-size tensor).
usage: tests/fuzz/make_seeds.py <out dir>"""
import glob, json, os, struct, sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
out = sys.argv[1]
os.makedirs(f"{out}/config", exist_ok=True)
os.makedirs(f"{out}/safetensors", exist_ok=True)

configs = [p for d in ("experiments/configs", "xiong/configs", "bench/configs")
           for p in sorted(glob.glob(f"{root}/{d}/*.toml"))]
for path in configs:
    text = open(path, "rb").read()
    name = os.path.basename(path)
    open(f"{out}/config/{name}", "wb").write(text)
    overrides = b"model.norm_placement=post\noptim.lr=3e-4\npreset=gemma\ntrain.steps=10"
    open(f"{out}/config/{name}.overrides", "wb").write(text + b"\0" + overrides)


def safetensors(tensors, metadata=None):
    """tensors: [(name, dtype code, shape, raw bytes)]"""
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


seeds = {
    "f32_matrix": safetensors([("w", "F32", [2, 3], struct.pack("<6f", *range(6)))]),
    "f64_scalar_meta": safetensors([("step", "F64", [], struct.pack("<d", 3.5))], {"format": "normlab", "step": "7"}),
    "i32_and_f16": safetensors([("ids", "I32", [4], struct.pack("<4i", 1, -2, 3, 4)),
                                ("h", "F16", [2], b"\x00\x3c\x00\xc0")]),
    "bf16_zero_size": safetensors([("b", "BF16", [2], b"\x80\x3f\x00\x40"), ("empty", "F32", [0, 5], b"")]),
    "empty": safetensors([]),
}
for name, data in seeds.items():
    open(f"{out}/safetensors/{name}.safetensors", "wb").write(data)
print(f"seeds in {out}/config and {out}/safetensors")
