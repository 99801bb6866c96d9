"""Runs from Python: load_config, train and open_run (docs/python.md, "Runs").

    cfg = normlab.load_config("experiments/configs/quickstart.toml", overrides=["train.steps=50"])
    run = normlab.train(cfg)                  # the GIL is released while it trains
    run.metrics["train_loss"]                 # NumPy, from metrics.jsonl
    run.grad_norms["global"]                  # NumPy, from grad_norms.csv (its first row: step 1, at init)
    normlab.open_run(run.path).summary        # the same run, read back from its directory

The C++ half (_normlab.load_run_config, _normlab.train_run) does what must be C++: the config's
checks and the training. Everything here is reading the files a run writes (train/run_dir.h).
"""
import json
import math
import os
import signal as _signal
from pathlib import Path
from typing import Dict, List, Optional, Union

import numpy as np

from . import _normlab
from . import progress as _progress
from ._normlab import Error
from .config import Config, PathLike, Section, load_config  # noqa: F401  (re-exported)

# The files of a run directory, as C++ names them (train/run_dir.h, run_files).
CONFIG_FILE = _normlab.run_files["config"]
METRICS_FILE = _normlab.run_files["metrics"]
GRAD_NORMS_FILE = _normlab.run_files["grad_norms"]
DYNAMICS_FILE = _normlab.run_files["dynamics"]
SUMMARY_FILE = _normlab.run_files["summary"]
FINGERPRINT_FILE = _normlab.run_files["fingerprint"]
CHECKPOINT_LINK = "checkpoint"


class Interrupted(KeyboardInterrupt):
    """train() was stopped by SIGINT (Ctrl-C) or SIGTERM: the trainer finished the step it was in, wrote a
    checkpoint and summary.json with status "interrupted". `run` is the resumable Run, `signal` the signal
    number; normlab.train(resume=e.run) continues it. A KeyboardInterrupt, so an unhandled one ends a script
    as Ctrl-C would."""

    def __init__(self, run: "Run", signal: int):
        try:
            name = _signal.Signals(signal).name
        except ValueError:
            name = f"signal {signal}"
        super().__init__(f"{run.path}: interrupted by {name} (checkpoint and summary written); continue it "
                         f"with normlab.train(resume='{run.path}')")
        self.run = run
        self.signal = signal


def train(config: Union[Config, PathLike, None] = None, quiet: bool = True,
          resume: Union[PathLike, "Run", bool, None] = None, stop_after: Optional[int] = None,
          overwrite: bool = False, extend_to_steps: Optional[int] = None,
          extend_to_epochs: Optional[int] = None, allow_schedule_change: bool = False, progress: Optional[bool] = None) -> "Run":
    """Trains one run, as `normlab train` does (train/trainer.h), and returns its Run.

    config: a Config (or a TOML path, read with load_config); the run goes to train.out_dir/train.name.
    quiet: no progress output on stderr. overwrite: start over in a directory that holds an earlier run.
    resume: continue a stopped or interrupted run from its checkpoint with its own config.toml: its
      directory, its Run, or True for config's own directory (out_dir/name). With a path or Run, config
      may be None; a config given must compute what the run computes (its fingerprint.txt).
      extend_to_steps: with resume, continue it to that many steps (allow_schedule_change as
      `normlab train --resume DIR train.steps=N --allow-schedule-change`). A finished run is returned
      as it is. extend_to_epochs: the same for a run that counts epochs (train.epochs=N).
    stop_after: stop (status "stopped", checkpointed, resumable) after this many steps of this call.
    progress: a progress bar (tqdm's when installed: a widget in a notebook) drawn from the run's
      metrics.jsonl; None: when stdout is a terminal or a notebook.

    The GIL is released while it trains: other Python threads keep running. While it trains the
    trainer handles SIGINT and SIGTERM itself (train/stop_signals.h): the first one stops it after the
    current step with a checkpoint, and train() then raises normlab.Interrupted (a KeyboardInterrupt)
    holding the resumable Run; a second one ends the process at once, as in the CLI. A diverged run is
    a result: its Run has status "diverged". Config and file errors raise normlab.Error.
    """
    resume_dir = ""
    if resume is not None and resume is not False:
        if resume is True:
            if not isinstance(config, Config):
                raise TypeError("train(resume=True) continues the run of the Config given: pass config")
            resume_dir = os.path.join(config["train.out_dir"], config["train.name"])
        else:
            resume_dir = os.fspath(resume.path if isinstance(resume, Run) else resume)
        if config is not None:
            given = config if isinstance(config, Config) else load_config(config)
            saved = os.path.join(resume_dir, FINGERPRINT_FILE)
            if os.path.exists(saved) and Path(saved).read_text().strip() != given.fingerprint():
                raise Error(f"[train] resume: the config given computes something else than the run in "
                            f"{resume_dir} (another fingerprint than its {FINGERPRINT_FILE}); a resumed run "
                            "continues with its saved config.toml (pass config=None, extend_to_steps=N to "
                            "extend it, or start a new run for anything else)")
        run_config = _normlab.load_run_config("", [])  # unused: the trainer reads the run's config.toml
    else:
        if config is None:
            raise TypeError("train() needs a config (a Config or a TOML path), or resume=RUN_DIR")
        if extend_to_steps is not None or extend_to_epochs is not None:
            raise TypeError("extend_to_steps and extend_to_epochs go with resume (they extend a run under way)")
        run_config = (config if isinstance(config, Config) else load_config(config))._rc
    def run_it():
        return _normlab.train_run(run_config, quiet=quiet, resume_dir=resume_dir, overwrite=overwrite,
                                  stop_after=-1 if stop_after is None else int(stop_after),
                                  extend_to_steps=extend_to_steps or 0, extend_to_epochs=extend_to_epochs or 0,
                                  allow_schedule_change=allow_schedule_change)

    if _progress.wanted(progress):
        shown = (config if isinstance(config, Config) else load_config(config) if config is not None
                 else load_config(os.path.join(resume_dir, CONFIG_FILE)))
        run_dir = resume_dir or os.path.join(shown["train.out_dir"], shown["train.name"])
        total = extend_to_steps or shown["train.steps"]
        if extend_to_epochs:  # the run's steps per epoch times the new epoch count
            total = shown["train.steps"] // shown["train.epochs"] * extend_to_epochs
        with _progress.ProgressBar(Path(run_dir) / METRICS_FILE, total):
            result = run_it()
    else:
        result = run_it()
    run = Run(result["run_dir"])
    if result["status"] == "interrupted":
        raise Interrupted(run, result["stop_signal"])
    return run


def open_run(path: PathLike) -> "Run":
    """The Run of an existing run directory (one that holds config.toml); raises FileNotFoundError."""
    return Run(path)


def _number(value):
    """A metrics.jsonl value as a column entry: null -> NaN, bool -> 0/1, numbers as floats."""
    if value is None:
        return math.nan
    if isinstance(value, bool):
        return float(value)
    return value


def read_metrics(path: PathLike) -> Dict[str, np.ndarray]:
    """metrics.jsonl as columns: one NumPy array per key ("step" first, then in first-seen order), one
    entry per record.

    "step" is int64; numeric keys are float64 with NaN where a record lacks the key or holds null
    (NaN/Inf are written as null); a key holding text ("diverged": the reason) is an object array with
    None where absent. The records are C++'s read_metrics's (train/run_dir.h): a last line cut short (a run
    still writing) is left out, any other line that is not a JSON object raises normlab.Error naming it.
    """
    records = [json.loads(text) for text in _normlab._read_metrics(str(path))]
    keys: List[str] = ["step"] if any("step" in r for r in records) else []
    seen = set(keys)
    for record in records:
        for key in record:
            if key not in seen:
                seen.add(key)
                keys.append(key)
    columns: Dict[str, np.ndarray] = {}
    for key in keys:
        values = [record.get(key) for record in records]
        if key == "step":
            columns[key] = np.array(values, dtype=np.int64)
        elif all(v is None or isinstance(v, (int, float)) for v in values):
            columns[key] = np.array([_number(v) for v in values], dtype=np.float64)
        else:
            columns[key] = np.array(values, dtype=object)
    return columns


def read_step_csv(path: PathLike) -> Dict[str, np.ndarray]:
    """A wide CSV whose first column is "step" (grad_norms.csv, dynamics.csv), as columns: "step" int64,
    the others float64 (nan, inf, -inf as written; NaN for an empty cell). Every row is kept, the first
    row of grad_norms.csv (step 1, the gradient at initialization) included. The table is C++'s
    read_step_csv's (train/run_dir.h): a last line cut short is left out; a malformed line, a cell that is
    not a number or a repeated column raises normlab.Error naming file:line and the column."""
    header, rows = _normlab._read_step_csv(str(path))
    table = np.array(rows, dtype=np.float64).reshape(len(rows), len(header))
    columns: Dict[str, np.ndarray] = {}
    for j, name in enumerate(header):
        columns[name] = table[:, j].astype(np.int64) if j == 0 else table[:, j].copy()
    return columns


class Run:
    """A run directory (train/run_dir.h) and what its files hold. Each property reads its file when asked
    (again only if the file changed), so a Run of a run under way shows its progress."""

    def __init__(self, path: PathLike):
        self._path = Path(path)
        if not self._path.is_dir():
            raise FileNotFoundError(f"{self._path}: no such run directory")
        if not (self._path / CONFIG_FILE).is_file():
            raise FileNotFoundError(f"{self._path}: not a run directory (no {CONFIG_FILE})")
        self._cache: Dict[str, tuple] = {}

    def _read(self, name: str, reader):
        """reader(path) of the run's file `name`, cached while its size and modification time stay."""
        file = self._path / name
        try:
            stat = file.stat()
        except FileNotFoundError:
            return None
        key = (stat.st_mtime_ns, stat.st_size)
        cached = self._cache.get(name)
        if cached is None or cached[0] != key:
            cached = (key, reader(file))
            self._cache[name] = cached
        return cached[1]

    @property
    def path(self) -> Path:
        """The run directory."""
        return self._path

    @property
    def name(self) -> str:
        """The directory's name (train.name)."""
        return self._path.name

    @property
    def config(self) -> Config:
        """The run's resolved configuration (its config.toml, read with load_config)."""
        return self._read(CONFIG_FILE, lambda f: load_config(f))

    @property
    def summary(self) -> Optional[dict]:
        """summary.json as a dict (status, steps_done, steps, final_train_loss, final_val_loss, best_val_loss,
        tokens_per_s, wall_s, parameters, ...; a loss never measured is None), or None before the run has
        finished or stopped."""
        def read(f):
            with open(f, encoding="utf-8") as file:
                return json.load(file)
        summary = self._read(SUMMARY_FILE, read)
        return None if summary is None else dict(summary)

    @property
    def status(self) -> str:
        """config/run_status.h's word: "completed", "diverged", "stopped" or "interrupted" (both resumable),
        from summary.json; "missing" when there is no summary.json (still running, or the process died)."""
        summary = self.summary
        return "missing" if summary is None else summary.get("status", "missing")

    @property
    def resumable(self) -> bool:
        """Whether train(resume=run) would continue it: status "stopped" or "interrupted"."""
        return self.status in ("stopped", "interrupted")

    @property
    def metrics(self) -> Dict[str, np.ndarray]:
        """metrics.jsonl as a dict of NumPy columns (read_metrics): "step", "train_loss", "lr", "grad_norm",
        "tokens_per_s", "val_loss" (NaN where a record has none), ...; {} before the first record."""
        columns = self._read(METRICS_FILE, read_metrics)
        return {} if columns is None else dict(columns)

    def metrics_frame(self):
        """metrics as a pandas DataFrame (one row per record); ImportError when pandas is not installed."""
        try:
            import pandas
        except ImportError as e:
            raise ImportError("Run.metrics_frame() needs pandas (pip install pandas); Run.metrics holds the "
                              "same columns as NumPy arrays without it") from e
        return pandas.DataFrame(self.metrics)

    @property
    def grad_norms(self) -> Dict[str, np.ndarray]:
        """grad_norms.csv as a dict of NumPy columns (read_step_csv): "step" (numbered as metrics: step 1 is
        the gradient at initialization, then every log.grad_norm_every steps and the last), one column per
        parameter, layer.N, global, residual_rms.N, ...; {} when the run logged none."""
        columns = self._read(GRAD_NORMS_FILE, read_step_csv)
        return {} if columns is None else dict(columns)

    @property
    def dynamics(self) -> Optional[Dict[str, np.ndarray]]:
        """dynamics.csv (log.dynamics_steps > 0, train/dynamics.h) as NumPy columns, or None without it."""
        columns = self._read(DYNAMICS_FILE, read_step_csv)
        return None if columns is None else dict(columns)

    @property
    def fingerprint(self) -> Optional[str]:
        """fingerprint.txt: the config fingerprint the run was started with."""
        fingerprint = self._read(FINGERPRINT_FILE, lambda f: f.read_text(encoding="utf-8").strip())
        return fingerprint

    @property
    def checkpoint(self) -> Optional[Path]:
        """The current checkpoint generation's directory (the `checkpoint` link resolved), or None."""
        link = self._path / CHECKPOINT_LINK
        return link.resolve() if link.exists() else None

    def __repr__(self) -> str:
        summary = self.summary
        steps = f", {summary.get('steps_done')}/{summary.get('steps')} steps" if summary else ""
        return f"Run('{self._path}', status={self.status!r}{steps})"
