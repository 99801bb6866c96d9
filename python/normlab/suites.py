"""Sweeps and the Xiong et al. suite from Python, through the `normlab` command (docs/python.md).

    table = normlab.sweep("experiments/configs/quickstart.toml",
                          {"model.norm_placement": ["post", "pre"], "seed": [1, 2, 3]}, jobs=2)
    table.seeds.frame()                    # sweep_seeds.csv: mean and 95% interval over seeds
    verdicts = normlab.reproduce_xiong(only=["E1"], quick=True)
    [(v["id"], v["verdict"]) for v in verdicts]

Both run the command line's own code (`normlab sweep`, `normlab reproduce xiong`) as a child
process, since a sweep's runs are child processes anyway: results, run directories, resumption by
fingerprint and Ctrl-C behave as on the command line. The `normlab` executable is found as
cli_binary() says.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
from collections import deque
from pathlib import Path
from typing import Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _normlab
from ._normlab import Error
from .config import Config, load_config
from .runs import Run

PathLike = Union[str, os.PathLike]


def cli_binary() -> Path:
    """The `normlab` executable: $NORMLAB_BINARY, else the one of the build tree this module was built
    in (BUILD/normlab beside BUILD/python/normlab/), else the one `pip install .` put beside this
    Python (its bin/), else `normlab` on PATH."""
    candidates = []
    if os.environ.get("NORMLAB_BINARY"):
        candidates.append(Path(os.environ["NORMLAB_BINARY"]))
    module = Path(_normlab.__file__).resolve()
    candidates += [module.parents[2] / "normlab", Path(sys.executable).parent / "normlab"]
    on_path = shutil.which("normlab")
    if on_path:
        candidates.append(Path(on_path))
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    raise Error("[sweep] no `normlab` executable: set NORMLAB_BINARY, build the command line (cmake --build), or "
                f"`pip install .`; looked at {', '.join(str(c) for c in candidates)}")


class Table(Sequence):
    """Rows of a CSV or JSON result, as dicts (numbers parsed); columns as NumPy arrays with
    table.column(name); a pandas DataFrame with table.frame() when pandas is installed."""

    def __init__(self, rows: List[dict], path: Optional[Path] = None):
        self.rows, self.path = rows, path

    def __getitem__(self, i):
        return self.rows[i]

    def __len__(self) -> int:
        return len(self.rows)

    def column(self, name: str) -> np.ndarray:
        values = [r.get(name) for r in self.rows]
        if all(isinstance(v, (int, float)) or v is None for v in values):
            return np.array([np.nan if v is None else v for v in values], dtype=float)
        return np.array(values, dtype=object)

    def frame(self):
        import pandas  # optional: only this method needs it
        return pandas.DataFrame(self.rows)

    def __repr__(self) -> str:
        return f"Table({len(self.rows)} rows{', ' + str(self.path) if self.path else ''})"


_TEXT_COLUMNS = {"name", "status", "run_dir", "fingerprint", "error", "seeds"}


def _cell(column: str, text: str):
    """A CSV cell: None when empty; the text in the text columns (a fingerprint may look like a
    number); else an int, a float or the text."""
    if text == "":
        return None
    if column in _TEXT_COLUMNS:
        return text
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _read_csv(path: Path) -> Table:
    with open(path, newline="") as f:
        rows = [{k: _cell(k, v) for k, v in row.items()} for row in csv.DictReader(f)]
    return Table(rows, path)


class SweepTable(Table):
    """sweep.csv (one row per point) with .seeds (sweep_seeds.csv) and .runs (each point's Run)."""

    @property
    def seeds(self) -> Table:
        return _read_csv(self.path.parent / "sweep_seeds.csv")

    @property
    def runs(self) -> List[Run]:
        return [Run(r["run_dir"]) for r in self.rows if r.get("run_dir")]


def _run_cli(arguments: List[str], what: str, quiet: bool) -> Tuple[int, str]:
    """Runs `normlab ARGUMENTS`, echoing its output unless quiet (a notebook sees it too), and returns
    its exit code and last lines. Ctrl-C is passed on to it (it stops its runs resumably), then
    re-raised; an exit by signal raises KeyboardInterrupt; an error exit raises Error (for a sweep,
    exit 1 may also mean a failed point, a row of its table: the caller decides)."""
    tail: deque = deque(maxlen=30)
    proc = subprocess.Popen([str(cli_binary())] + arguments, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, bufsize=1)
    try:
        for line in proc.stdout:
            tail.append(line)
            if not quiet:
                print(line, end="", flush=True)
        code = proc.wait()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        proc.wait()
        raise
    if code >= 128:
        raise KeyboardInterrupt(f"{what} stopped by signal {code - 128}; run it again to resume")
    if code not in (0, 1) or (code == 1 and what != "sweep"):
        raise Error(f"[{what}] `normlab {' '.join(arguments)}` exited {code}:\n{''.join(tail)}")
    return code, "".join(tail)


def _check_builtin_norms(config: Config, axes: Mapping[str, Iterable]) -> None:
    builtin = set(_normlab.builtin_norm_names())
    used = {str(config["model.norm_type"])} | {str(v) for v in axes.get("model.norm_type", [])}
    local = sorted(used - builtin)
    if local:
        raise Error(f"[sweep] norm {', '.join(local)} was registered in this Python process only; the sweep's runs "
                    "are child `normlab train` processes that do not have it: train its points with normlab.train")


def _axis_text(key: str, values: Iterable) -> str:
    texts = []
    for v in values:
        text = ("true" if v else "false") if isinstance(v, bool) else str(v)
        if "," in text:
            raise Error(f"[sweep] axis {key}: value {text!r} holds a comma, which separates values")
        texts.append(text)
    return f"{key}={','.join(texts)}"


def sweep(config: Union[Config, PathLike], axes: Mapping[str, Sequence], *, overrides: Sequence[str] = (),
          out_dir: Optional[PathLike] = None, jobs: int = 1, threads: Optional[int] = None,
          quiet: bool = True) -> SweepTable:
    """Trains every point of the grid `axes` ({"optim.lr": [5e-4, 1e-3], "seed": [1, 2, 3]}) as
    `normlab sweep` does, and returns sweep.csv as a SweepTable.

    config: a TOML path or a Config (its TOML is written to OUT/sweep_config-<fingerprint>.toml, which the
    runs read when they start: a name per content, so a second sweep into OUT cannot change it). overrides: fixed
    for every point (--set). out_dir: default runs/sweep-<config name>. jobs: runs at a time. A point
    already completed with the same config is reused; a failed or diverged point is a row, not an
    exception. Norms registered from Python are refused (the runs are other processes).
    """
    cfg = config if isinstance(config, Config) else load_config(config)
    _check_builtin_norms(cfg.with_overrides(list(overrides)) if overrides else cfg, axes)
    out = Path(out_dir) if out_dir is not None else Path("runs") / f"sweep-{cfg['train.name']}"
    if isinstance(config, Config):
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"sweep_config-{cfg.fingerprint()}.toml"
        if not path.exists():  # written whole under a temporary name, then renamed into place
            partial = path.with_suffix(f".toml.{os.getpid()}.part")
            partial.write_text(cfg.to_toml())
            os.replace(partial, path)
    else:
        path = Path(config)
    arguments = ["sweep", str(path)] + [_axis_text(k, v) for k, v in axes.items()]
    for o in overrides:
        arguments += ["--set", o]
    arguments += ["--out", str(out), "--jobs", str(int(jobs))]
    if threads is not None:
        arguments += ["--threads", str(int(threads))]
    if quiet:
        arguments.append("--quiet")
    table = out / "sweep.csv"
    before = table.stat().st_mtime_ns if table.exists() else None
    code, output = _run_cli(arguments, "sweep", quiet)
    written = table.exists() and table.stat().st_mtime_ns != before
    if code != 0 and not written:  # refused before any run (a config error): no table of this sweep
        raise Error(f"[sweep] `normlab {' '.join(arguments)}` exited {code}:\n{output}")
    return SweepTable(_read_csv(out / "sweep.csv").rows, out / "sweep.csv")


def reproduce_xiong(only: Union[str, Sequence[str], None] = None, *, quick: bool = False,
                    out_dir: Optional[PathLike] = None, jobs: int = 1, configs: Optional[PathLike] = None,
                    confirmatory: bool = False, analyse_only: bool = False, quiet: bool = True) -> Table:
    """Runs the Xiong et al. 2020 suite (`normlab reproduce xiong`, docs/xiong/README.md) and returns
    its verdict table (OUT/verdicts.json): one dict per claim with id, claim, verdict, estimate,
    ci_low, ci_high, p_value, p_holm, family_wise, criterion, ... . only: experiments or claims
    ("E1", ["E3a", "E3d@1e-3"]). out_dir: default runs/xiong (runs/xiong-quick with quick). The
    report is OUT/report.md; finished runs are reused by fingerprint when called again."""
    arguments = ["reproduce", "xiong", "--jobs", str(int(jobs))]
    if only:
        arguments += ["--only", only if isinstance(only, str) else ",".join(only)]
    if quick:
        arguments.append("--quick")
    out = Path(out_dir) if out_dir is not None else Path("runs") / ("xiong-quick" if quick else "xiong")
    if confirmatory:
        out = Path(out_dir) if out_dir is not None else Path("runs") / "xiong-v4"
        arguments.append("--confirmatory")
    if analyse_only:
        arguments.append("--analyse-only")
    arguments += ["--out", str(out)]
    if configs is not None:
        arguments += ["--configs", str(configs)]
    if quiet:
        arguments.append("--quiet")
    _run_cli(arguments, "reproduce", quiet)
    verdicts = out / "verdicts.json"
    if not verdicts.exists():
        return Table([], verdicts)
    return Table(json.loads(verdicts.read_text()), verdicts)
