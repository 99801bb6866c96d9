"""scripts/export_val_curves.py: finished runs only, rows by step, a malformed line named."""
import csv
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "export_val_curves.py"


def make_run(root, name, rows, summary=None):
    run = root / name
    run.mkdir(parents=True)
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if summary is not None:
        (run / "summary.json").write_text(json.dumps(summary))


def test_finished_runs_only_with_rows_by_step(tmp_path):
    runs = tmp_path / "copy"
    make_run(runs, "b-run", [{"step": 20, "lr": 0.1, "val_loss": 1.5}, {"step": 10, "lr": 0.1, "val_loss": 2.5},
                             {"step": 15, "lr": 0.1, "train_loss": 2.0}, {"step": 1, "lr": 0.1, "train_loss": 4.25}],
             {"status": "completed", "steps_done": 20, "final_val_loss": 1.5})
    make_run(runs, "a-run", [{"step": 1, "lr": 0.2, "train_loss": 4.5}, {"step": 10, "lr": 0.2, "val_loss": 3.0}],
             {"status": "diverged", "steps_done": 12, "final_val_loss": None, "diverged_at_step": 11})
    make_run(runs, "still-training", [{"step": 10, "lr": 0.2, "val_loss": 9.0}])
    out = tmp_path / "curves.csv"
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out), f"copy={runs}"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader(out.open()))
    assert rows == [["task", "run", "step", "lr", "val_loss"], ["copy", "a-run", "10", "0.2", "3.0"],
                    ["copy", "b-run", "10", "0.1", "2.5"], ["copy", "b-run", "20", "0.1", "1.5"]]
    runs_rows = list(csv.reader((tmp_path / "curves_runs.csv").open()))
    assert runs_rows[1:] == [["copy", "a-run", "diverged", "12", "", "4.5", "11"],
                             ["copy", "b-run", "completed", "20", "1.5", "4.25", ""]]


def test_a_malformed_line_is_named(tmp_path):
    runs = tmp_path / "text"
    make_run(runs, "r", [], {"status": "completed"})
    (runs / "r" / "metrics.jsonl").write_text('{"step": 1, "val_loss": 2.0}\n{"step": 2,\n')
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path / "c.csv"), f"text={runs}"],
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert "r/metrics.jsonl:2" in done.stderr
