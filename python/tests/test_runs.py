"""Runs from Python: load_config, train, open_run (docs/python.md, "Runs"). Tiny runs (the copy task,
2 layers of width 16, one thread): the whole file takes a few seconds."""
import csv
import json
import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

import normlab

# tests/common/command_util.h's tiny_config_toml, with more steps where a test needs them.
TINY = """\
[model]
d_model = 16
n_heads = 2
n_layers = 2
d_ff = 32
context_length = 8
norm_placement = "pre"
[optim]
name = "adam"
lr = 1e-2
[data]
source = "copy"
copy_length = 4
copy_vocab = 8
[train]
name = "tiny"
out_dir = {out_dir}
steps = {steps}
batch_size = 4
context = 8
threads = 1
[log]
every = 1
eval_every = {eval_every}
eval_batches = 1
grad_norm_every = 2
"""


def write_tiny(tmp_path, steps=6, eval_every=2, name="tiny.toml"):
    path = tmp_path / name
    path.write_text(TINY.format(out_dir=json.dumps(str(tmp_path / "runs")), steps=steps, eval_every=eval_every))
    return path


def test_load_config_reads_the_file_and_overrides(tmp_path):
    cfg = normlab.load_config(write_tiny(tmp_path), overrides=["optim.lr=3e-3", "train.steps=9"])
    assert isinstance(cfg, normlab.Config)
    assert cfg["train.steps"] == 9
    assert cfg["optim.lr"] == pytest.approx(3e-3)
    assert cfg["model"]["d_model"] == 16 and cfg.model.n_layers == 2
    assert cfg.model.norm_placement == "pre" and cfg["data.source"] == "copy"
    assert cfg.to_dict()["train"]["threads"] == 1
    assert "[model]" in cfg.to_toml() and "d_model = 16" in cfg.to_toml()
    assert "train.steps" in cfg and "train.nope" not in cfg
    with pytest.raises(KeyError):
        cfg["train.nope"]
    more = cfg.with_overrides(["train.steps=12"])
    assert more["train.steps"] == 12 and more["optim.lr"] == pytest.approx(3e-3) and cfg["train.steps"] == 9
    # The resolved TOML reads back as an equal config.
    saved = tmp_path / "resolved.toml"
    saved.write_text(cfg.to_toml())
    assert normlab.load_config(saved) == cfg and normlab.load_config(saved).fingerprint() == cfg.fingerprint()


def test_config_errors_name_file_line_and_key(tmp_path):
    path = write_tiny(tmp_path)
    text = path.read_text().replace('norm_placement = "pre"', 'norm_placment = "pre"')
    path.write_text(text)
    line = text.splitlines().index('norm_placment = "pre"') + 1
    with pytest.raises(normlab.Error) as e:
        normlab.load_config(path)
    assert str(e.value) == (f"{path}:{line}: [model] unknown key 'norm_placment' "
                            "(did you mean 'norm_placement'?)")
    assert isinstance(e.value, ValueError)
    with pytest.raises(normlab.Error, match=r"override 'optim.lr=-1': \[optim\] lr must be > 0"):
        normlab.load_config(write_tiny(tmp_path, name="ok.toml"), overrides=["optim.lr=-1"])
    with pytest.raises(normlab.Error, match="cannot open config file"):
        normlab.load_config(tmp_path / "absent.toml")


def read_jsonl(path):
    return [json.loads(line) for line in open(path) if line.strip()]


def test_train_returns_a_completed_run_that_open_run_reads_back(tmp_path):
    cfg = normlab.load_config(write_tiny(tmp_path, steps=30))
    run = normlab.train(cfg)
    assert isinstance(run, normlab.Run) and run.path == tmp_path / "runs" / "tiny"
    assert run.status == "completed" and run.summary["steps_done"] == 30 and not run.resumable
    m = run.metrics
    assert list(m)[0] == "step" and m["step"].dtype == np.int64
    np.testing.assert_array_equal(m["step"], np.arange(1, 31))
    loss = m["train_loss"]
    assert loss.dtype == np.float64 and np.all(np.isfinite(loss))
    assert loss[-5:].mean() < loss[:5].mean() - 0.3  # it learns the copy task
    # val_loss every log.eval_every = 2 updates: NaN in the records without one.
    assert np.all(np.isnan(m["val_loss"][0::2])) and np.all(np.isfinite(m["val_loss"][1::2]))
    assert run.summary["final_train_loss"] == pytest.approx(loss[-1])
    assert run.summary["final_val_loss"] == pytest.approx(m["val_loss"][-1])

    # grad_norms.csv: every row, the first (step 1, the gradient at initialization) included, then every
    # log.grad_norm_every = 2 updates and the last; the same numbers as the file, read independently here.
    g = run.grad_norms
    np.testing.assert_array_equal(g["step"], [1] + list(range(2, 31, 2)))
    with open(run.path / "grad_norms.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert list(g) == rows[0] and len(rows) - 1 == len(g["step"])
    for j, name in enumerate(rows[0][1:], start=1):
        np.testing.assert_array_equal(g[name], [float(r[j]) for r in rows[1:]])
    assert {"layer.0", "layer.1", "global", "tok_emb.weight"} <= set(g)
    # The global norm is the grad_norm metrics.jsonl logs for the same update.
    np.testing.assert_allclose(g["global"], m["grad_norm"][g["step"] - 1], rtol=1e-6)

    again = normlab.open_run(str(run.path))
    assert again.status == "completed" and again.config == run.config and again.config["train.steps"] == 30
    records = read_jsonl(run.path / "metrics.jsonl")
    np.testing.assert_array_equal(again.metrics["train_loss"], [r["train_loss"] for r in records])
    np.testing.assert_array_equal(again.grad_norms["global"], g["global"])
    assert again.fingerprint == cfg.fingerprint()  # of the config given (config.toml adds the vocabulary)
    # A C++ error raised while the GIL is released comes back as normlab.Error.
    with pytest.raises(normlab.Error, match="tiny"):
        normlab.train(cfg)  # the directory holds a run now: resume it, or overwrite=True


def test_metrics_frame_needs_pandas(tmp_path, monkeypatch):
    run = normlab.train(normlab.load_config(write_tiny(tmp_path)))
    try:
        import pandas  # noqa: F401
    except ImportError:
        pass
    else:
        frame = run.metrics_frame()
        np.testing.assert_array_equal(frame["train_loss"].to_numpy(), run.metrics["train_loss"])
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(ImportError, match="needs pandas"):
        run.metrics_frame()


def test_open_run_refuses_what_is_not_a_run(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such run directory"):
        normlab.open_run(tmp_path / "absent")
    with pytest.raises(FileNotFoundError, match="no config.toml"):
        normlab.open_run(tmp_path)


def test_metrics_reader_keeps_gaps_and_text(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1, "train_loss": 2.0, "lr": 0.1}\n{"step": 2, "train_loss": null, "val_loss": 1.5}\n'
                    '{"step": 3, "diverged": "loss is nan"}\n{"step": 4, "tra')  # the last line cut short
    m = normlab.runs.read_metrics(path)
    np.testing.assert_array_equal(m["step"], [1, 2, 3])
    np.testing.assert_array_equal(m["train_loss"], [2.0, np.nan, np.nan])
    np.testing.assert_array_equal(m["val_loss"], [np.nan, 1.5, np.nan])
    assert list(m["diverged"]) == [None, None, "loss is nan"]


def wait_for(predicate, seconds=30):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def test_train_releases_the_gil(tmp_path):
    """Another Python thread runs while train() trains: it sees the run under way (metrics.jsonl growing,
    no summary.json yet) and counts. With the GIL held, it could only run before or after."""
    cfg = normlab.load_config(write_tiny(tmp_path, steps=300, eval_every=100))
    run_dir = tmp_path / "runs" / "tiny"
    seen_under_way = 0
    done = threading.Event()

    def watch():
        nonlocal seen_under_way
        while not done.is_set():
            if (run_dir / "metrics.jsonl").exists() and not (run_dir / "summary.json").exists():
                seen_under_way += 1
            time.sleep(0.0005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        run = normlab.train(cfg)
    finally:
        done.set()
        watcher.join()
    assert run.status == "completed"
    assert seen_under_way > 10, f"the other thread ran {seen_under_way} times while train() trained"


def test_stop_after_and_resume_give_the_uninterrupted_run(tmp_path):
    whole = normlab.train(normlab.load_config(write_tiny(tmp_path, steps=10)))
    cfg = normlab.load_config(write_tiny(tmp_path, steps=10), overrides=["train.name=parts"])
    first = normlab.train(cfg, stop_after=4)
    assert first.status == "stopped" and first.resumable and first.summary["steps_done"] == 4
    np.testing.assert_array_equal(first.metrics["step"], [1, 2, 3, 4])
    assert first.checkpoint is not None
    done = normlab.train(cfg, resume=True)
    assert done.status == "completed" and done.path == first.path
    np.testing.assert_array_equal(done.metrics["step"], np.arange(1, 11))
    np.testing.assert_allclose(done.metrics["train_loss"], whole.metrics["train_loss"], rtol=1e-6)
    np.testing.assert_array_equal(done.grad_norms["step"], whole.grad_norms["step"])
    # A finished run is returned as it is; a resume with another config is refused.
    assert normlab.train(resume=done.path).status == "completed"
    with pytest.raises(normlab.Error, match="computes something else"):
        normlab.train(cfg.with_overrides(["optim.lr=1e-3"]), resume=done)


def test_sigint_stops_after_a_step_with_a_resumable_run(tmp_path):
    """Ctrl-C during train(): the trainer's handler (train/stop_signals.h) stops it after the current
    step with a checkpoint; train() raises normlab.Interrupted, a KeyboardInterrupt holding the Run."""
    cfg = normlab.load_config(write_tiny(tmp_path, steps=500, eval_every=1000))
    run_dir = tmp_path / "runs" / "tiny"
    sent = []

    def interrupt():  # once training is under way, so the trainer's handler is the one installed
        metrics = run_dir / "metrics.jsonl"
        wait_for(lambda: metrics.exists() and metrics.stat().st_size > 0)
        if not (run_dir / "summary.json").exists():  # 500 steps take about a second: not done yet
            os.kill(os.getpid(), signal.SIGINT)
            sent.append(True)

    sender = threading.Thread(target=interrupt)
    sender.start()
    try:
        with pytest.raises(KeyboardInterrupt) as e:
            normlab.train(cfg)
    finally:
        sender.join()
    assert sent and isinstance(e.value, normlab.Interrupted) and e.value.signal == signal.SIGINT
    run = e.value.run
    assert run.status == "interrupted" and run.resumable and "normlab.train(resume=" in str(e.value)
    stopped_at = run.summary["steps_done"]
    assert 1 <= stopped_at < 500 and run.metrics["step"][-1] == stopped_at
    # Python's own SIGINT handling is back once train() has returned.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    done = normlab.train(resume=run)
    assert done.status == "completed" and done.summary["steps_done"] == 500
    np.testing.assert_array_equal(done.metrics["step"], np.arange(1, 501))


def test_resume_extends_a_run(tmp_path):
    cfg = normlab.load_config(write_tiny(tmp_path, steps=4))  # a constant rate: extending changes nothing
    assert normlab.train(cfg).status == "completed"
    done = normlab.train(resume=True, config=cfg, extend_to_steps=7)
    assert done.status == "completed" and done.summary["steps_done"] == 7 and done.config["train.steps"] == 7
    np.testing.assert_array_equal(done.metrics["step"], np.arange(1, 8))


def test_train_sets_aside_a_pending_tape(tmp_path):
    x = normlab.Var(np.ones(3), requires_grad=True)
    y = normlab.ops.sum_all(normlab.ops.square(x))  # recorded, not differentiated yet
    pending = normlab.tape_size()
    assert normlab.train(normlab.load_config(write_tiny(tmp_path))).status == "completed"
    assert normlab.tape_size() == pending
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])
    with normlab.no_grad(), pytest.raises(normlab.Error, match="no_grad"):
        normlab.train(normlab.load_config(write_tiny(tmp_path), overrides=["train.name=other"]))


def test_progress_draws_the_steps_from_the_metrics(tmp_path, capsys):
    run = normlab.train(normlab.load_config(write_tiny(tmp_path, steps=6)), progress=True)
    out = capsys.readouterr().out
    assert run.status == "completed"
    assert "] 6/6 loss " in out.splitlines()[-1].split("\r")[-1], repr(out)
    normlab.train(normlab.load_config(write_tiny(tmp_path, steps=6, name="quiet.toml"),
                                      overrides=["train.name=quiet"]), progress=False)
    assert capsys.readouterr().out == ""


def test_step_csv_reader_is_the_cpp_one(tmp_path):
    """read_step_csv reads with C++'s rules: a cut last line left out, a bad cell an Error naming it."""
    path = tmp_path / "grad_norms.csv"
    path.write_text("step,layer.0,global\n1,0.5,\n2,nan,inf\n3,1")
    g = normlab.runs.read_step_csv(path)
    np.testing.assert_array_equal(g["step"], [1, 2])
    assert g["step"].dtype == np.int64
    np.testing.assert_array_equal(g["layer.0"], [0.5, np.nan])
    np.testing.assert_array_equal(g["global"], [np.nan, np.inf])
    path.write_text("step,layer.0\n1,0.5x\n")
    with pytest.raises(normlab.Error, match=r"grad_norms.csv:2: column 'layer.0': '0.5x' is not a number"):
        normlab.runs.read_step_csv(path)
    assert normlab.runs.GRAD_NORMS_FILE == "grad_norms.csv"  # the name C++ writes (run_files)
