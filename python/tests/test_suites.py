"""normlab.sweep and normlab.reproduce_xiong: the command line's sweep and suite from Python, their
results as tables (docs/python.md, "Sweeps and the Xiong suite")."""
import os

import numpy as np
import pytest

import normlab
from normlab import ops

from test_runs import write_tiny


def test_a_sweep_trains_every_point_and_returns_its_tables(tmp_path):
    out = tmp_path / "sweep"
    table = normlab.sweep(write_tiny(tmp_path, steps=4), {"model.norm_placement": ["post", "pre"], "seed": [1, 2]},
                          out_dir=out, jobs=2)
    assert len(table) == 4
    assert sorted(r["model.norm_placement"] for r in table) == ["post", "post", "pre", "pre"]
    assert all(r["status"] == "completed" for r in table)
    assert np.all(np.isfinite(table.column("final_val_loss")))
    seeds = table.seeds
    assert sorted(r["model.norm_placement"] for r in seeds) == ["post", "pre"] and all(r["n"] == 2 for r in seeds)
    runs = table.runs
    assert len(runs) == 4 and all(r.status == "completed" for r in runs)
    # called again: every point is reused by its fingerprint, nothing is trained again
    before = {r.path: os.path.getmtime(r.path / "metrics.jsonl") for r in runs}
    again = normlab.sweep(write_tiny(tmp_path, steps=4), {"model.norm_placement": ["post", "pre"], "seed": [1, 2]},
                          out_dir=out, jobs=2)
    assert [r["final_val_loss"] for r in again] == [r["final_val_loss"] for r in table]
    assert {p: os.path.getmtime(p / "metrics.jsonl") for p in before} == before


def test_a_sweep_of_a_config_object_and_its_errors(tmp_path):
    cfg = normlab.load_config(write_tiny(tmp_path, steps=3))
    table = normlab.sweep(cfg, {"optim.lr": [1e-3, 3e-3]}, overrides=["train.steps=2"], out_dir=tmp_path / "s")
    written = tmp_path / "s" / f"sweep_config-{cfg.fingerprint()}.toml"
    assert normlab.load_config(written).fingerprint() == cfg.fingerprint()
    assert [r["optim.lr"] for r in table] == [0.001, 0.003]
    assert all(len(r.metrics["train_loss"]) == 2 for r in table.runs)
    with pytest.raises(normlab.Error, match=r"optim.lr.*-1"):
        normlab.sweep(cfg, {"optim.lr": [1e-3, -1]}, out_dir=tmp_path / "s")  # its earlier table is no answer


def test_a_sweep_refuses_a_norm_registered_in_python(tmp_path):
    normlab.register_norm("only_here", {"w": "ones"}, lambda x, p: ops.mul(x, p["w"]))
    with pytest.raises(normlab.Error, match=r"\[sweep\] norm only_here was registered in this Python process only"):
        normlab.sweep(write_tiny(tmp_path), {"model.norm_type": ["layernorm", "only_here"]}, out_dir=tmp_path / "s")
    with pytest.raises(normlab.Error, match=r"norm only_here was registered"):
        normlab.sweep(write_tiny(tmp_path), {"seed": [1]}, overrides=["model.norm_type=only_here"], out_dir=tmp_path / "t")


def test_reproduce_xiong_returns_the_verdict_table(tmp_path):
    verdicts = normlab.reproduce_xiong(only="E2", quick=True, out_dir=tmp_path / "xiong")
    assert len(verdicts) >= 2
    ids = [v["id"] for v in verdicts]
    assert all(i.startswith("E2") for i in ids), ids
    assert all(v["verdict"] in ("reproduced", "contradicted", "inconclusive") for v in verdicts)
    assert (tmp_path / "xiong" / "report.md").exists()
