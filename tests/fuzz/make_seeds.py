#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora, one folder per target under <out>: config/ (the repository's
configs from experiments/configs, xiong/configs and bench/configs, each also with overrides after a
NUL byte, as fuzz_config reads them), safetensors/ (small valid files of every dtype normlab reads,
with and without metadata, an empty one, a zero-size tensor), registration/ (both committed
registrations), step_files/ (a grad_norms.csv, a metrics.jsonl, a summary.json), hf_config/ (the
six Hugging Face fixtures' config.json), record_v5/ (the committed v5 record), run_files/ (a
provenance.json, the v4 record) and translation_corpus/ (a pairs file). Each file is an input in
the target's format (README.md here).
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


def seed(target, name, data):
    os.makedirs(f"{out}/{target}", exist_ok=True)
    open(f"{out}/{target}/{name}", "wb").write(data)


def read(path):
    return open(f"{root}/{path}", "rb").read()


seed("registration", "v4.toml", b"\0" + read("xiong/registration.toml"))
seed("registration", "v5.toml", b"\1" + read("xiong/registration_v5.toml"))
seed("step_files", "grad_norms.csv",
     b"\0step,blocks.0.ffn.w2.weight,blocks.1.ffn.w2.weight,layer.0,layer.1,global,residual_rms.0\n"
     b"1,0.5,0.25,0.5,0.25,0.559,1.25\n50,nan,inf,,0.1,1e-07,2\n")
seed("step_files", "metrics.jsonl",
     b'\1{"step": 1, "train_loss": 3.5, "lr": 0.001}\n{"step": 2, "train_loss": null, "val_loss": 3.1}\n'
     b'{"step": 3, "diverged": "loss is nan"}\n{"step": 4, "tr')
summary = {"status": "completed", "steps": 30, "steps_done": 30, "final_train_loss": 3.48, "final_val_loss": 3.47,
           "best_val_loss": 3.46, "tokens_per_s": 21754.6, "wall_s": 0.53, "reason": "",
           "started_utc": "2026-12-06T09:00:15Z", "finished_utc": "2026-12-06T09:00:16Z"}
seed("step_files", "summary.json", b"\2" + json.dumps(summary, indent=2).encode())
for path in sorted(glob.glob(f"{root}/tests/data/hf-fixtures/*/config.json")):
    seed("hf_config", os.path.basename(os.path.dirname(path)) + ".json", open(path, "rb").read())
v5 = "docs/xiong/data/v5"
init_profile = b"arm,seed,stack,weight,layer,norm_of_mean\npost-w1-5e-4,2001,encoder,w2,0,0.5\n"
seed("record_v5", "record", b"\0".join([read(f"{v5}/runs.csv"), read(f"{v5}/val_curves.csv"), init_profile,
                                        read(f"{v5}/frozen_build.json")]))
provenance = [{"code_crc32": "1dc813a0", "code_file": "/x/normlab", "commit": "1e50970e5b6c", "cpu": "Xeon",
               "first_step": 0, "started_utc": "2026-12-06T09:00:15Z", "threads": 1}]
seed("run_files", "provenance.json", b"\0" + json.dumps(provenance).encode())
v4 = "docs/xiong/data/v4"
seed("run_files", "v4_record", b"\1" + read(f"{v4}/val_curves_runs.csv")[:20000] + b"\0" +
     read(f"{v4}/val_curves.csv")[:20000])
seed("translation_corpus", "pairs.tsv", b"\1the cat\tel gato\na dog\tun perro\n\nbad line\n")
print(f"seed corpora in {out}: " + ", ".join(sorted(os.listdir(out))))
