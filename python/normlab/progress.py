"""A progress bar for normlab.train, drawn from the run's metrics.jsonl while the C++ trainer runs
(the GIL is free then): tqdm's (tqdm.auto: a widget in a notebook) when tqdm is installed, else one
line rewritten with a carriage return."""
import json
import sys
import threading
from pathlib import Path
from typing import Optional


def wanted(progress: Optional[bool]) -> bool:
    """progress=None: a bar when stdout is a terminal or an IPython kernel (a notebook)."""
    if progress is not None:
        return bool(progress)
    if "ipykernel" in sys.modules:
        return True
    return hasattr(sys.stdout, "isatty") and sys.stdout.isatty()


def _last_row(path: Path) -> Optional[dict]:
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - 4096))
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            row = json.loads(line)
        except ValueError:
            continue  # a line being written
        if "step" in row and "train_loss" in row:
            return row
    return None


class ProgressBar:
    """with ProgressBar(run_dir / "metrics.jsonl", total_steps): ... draws until the block ends."""

    def __init__(self, metrics: Path, total: int, every: float = 0.5):
        self.metrics, self.total, self.every = Path(metrics), int(total), every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._bar = None

    def __enter__(self):
        try:
            from tqdm.auto import tqdm
            self._bar = tqdm(total=self.total, unit="step", leave=True)
        except ImportError:
            self._bar = None
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._draw()
        if self._bar is not None:
            self._bar.close()
        else:
            sys.stdout.write("\n")
            sys.stdout.flush()
        return False

    def _loop(self):
        while not self._stop.wait(self.every):
            self._draw()

    def _draw(self):
        row = _last_row(self.metrics)
        if row is None:
            return
        step, loss = int(row["step"]), row["train_loss"]
        if self._bar is not None:
            self._bar.n = step
            self._bar.set_postfix(loss=f"{loss:.4f}" if isinstance(loss, float) else loss, refresh=True)
            return
        width = 30
        done = width * min(step, self.total) // max(self.total, 1)
        sys.stdout.write(f"\r[{'#' * done}{'.' * (width - done)}] {step}/{self.total} loss {loss:.4f}")
        sys.stdout.flush()
