"""The Xiong suite's init-time gradient probe, recomputed by the PyTorch model (bench/torch_model.py).

    python3 bench/torch_probe.py DIR

For every DIR/*.safetensors written by `normlab reproduce xiong` (xiong/torch_check.cpp): the
model's initial weights ("param.<name>"), its random-token batches ("ids.<b>", "targets.<b>") and
the resolved config (metadata "config"). Each batch's loss is backpropagated through the PyTorch
model with those weights, and the FFN gradients are measured as normlab's probe measures them
(xiong/probes.cpp: measure_layer_grads): per layer, the mean over batches of ||grad W||_F and the
norm of the batch-mean gradient, for W1 and W2. Writes DIR/torch_results.json:
{file name: {"w1_mean": [...], "w1_nom": [...], "w2_mean": [...], "w2_nom": [...]}}.
"""
import glob
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_model as tm  # noqa: E402
from torch_reference import read_safetensors  # noqa: E402


def probe_file(path):
    tensors, metadata = read_safetensors(path)
    config = tm.load_config(text=metadata["config"])
    m = config["model"]
    m["vocab_size"] = tensors["param.tok_emb.weight"].shape[0]
    model = tm.TransformerLM(m)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.from_numpy(tensors["param." + name].copy()))
    layers = m["n_layers"]
    batches = sorted(int(k.split(".")[1]) for k in tensors if k.startswith("ids."))
    out = {k: [0.0] * layers for k in ("w1_mean", "w2_mean")}
    sums = {"w1": [None] * layers, "w2": [None] * layers}
    for b in batches:
        model.zero_grad()
        ids = torch.from_numpy(tensors[f"ids.{b}"].astype("int64"))
        targets = torch.from_numpy(tensors[f"targets.{b}"].astype("int64"))
        model.loss(ids, targets).backward()
        for layer, block in enumerate(model.blocks):
            for key, weight in (("w1", block.ffn.w1.weight), ("w2", block.ffn.w2.weight)):
                g = weight.grad.detach().double()
                out[f"{key}_mean"][layer] += g.norm().item() / len(batches)
                sums[key][layer] = g.clone() if sums[key][layer] is None else sums[key][layer] + g
    for key in ("w1", "w2"):
        out[f"{key}_nom"] = [(s / len(batches)).norm().item() for s in sums[key]]
    return out


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    directory = sys.argv[1]
    torch.set_num_threads(1)
    results = {os.path.basename(p): probe_file(p) for p in sorted(glob.glob(os.path.join(directory, "*.safetensors")))}
    with open(os.path.join(directory, "torch_results.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(f"torch_probe: {len(results)} models -> {directory}/torch_results.json")


if __name__ == "__main__":
    main()
