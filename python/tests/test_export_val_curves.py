"""scripts/export_val_curves.py: finished runs only, rows by step, fingerprints, merging, a malformed line named."""
import csv
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "export_val_curves.py"


def make_run(root, name, rows, summary=None, fingerprint=None):
    run = root / name
    run.mkdir(parents=True)
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if summary is not None:
        (run / "summary.json").write_text(json.dumps(summary))
    if fingerprint is not None:
        (run / "fingerprint.txt").write_text(fingerprint + "\n")


def export(out, *specs, merge=False):
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)] + (["--merge"] if merge else []) + list(specs),
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_finished_runs_only_with_rows_by_step(tmp_path):
    runs = tmp_path / "copy"
    make_run(runs, "b-run", [{"step": 20, "lr": 0.1, "val_loss": 1.5}, {"step": 10, "lr": 0.1, "val_loss": 2.5},
                             {"step": 15, "lr": 0.1, "train_loss": 2.0}, {"step": 1, "lr": 0.1, "train_loss": 4.25}],
             {"status": "completed", "steps_done": 20, "final_val_loss": 1.5, "started_utc": "2026-12-06T01:00:00Z",
              "finished_utc": "2026-12-06T02:00:00Z",
              "sittings": [{"commit": "abc", "code_crc32": "11111111", "cpu": "Xeon", "threads": 2},
                           {"commit": "def", "code_crc32": "11111111", "cpu": "Xeon", "threads": 2}]},
             fingerprint="0123abcd")
    make_run(runs, "a-run", [{"step": 1, "lr": 0.2, "train_loss": 4.5}, {"step": 10, "lr": 0.2, "val_loss": 3.0}],
             {"status": "diverged", "steps_done": 12, "final_val_loss": None, "diverged_at_step": 11})
    make_run(runs, "still-training", [{"step": 10, "lr": 0.2, "val_loss": 9.0}])
    out = tmp_path / "curves.csv"
    export(out, f"copy={runs}")
    rows = list(csv.reader(out.open()))
    assert rows == [["task", "run", "step", "lr", "val_loss"], ["copy", "a-run", "10", "0.2", "3.0"],
                    ["copy", "b-run", "10", "0.1", "2.5"], ["copy", "b-run", "20", "0.1", "1.5"]]
    runs_rows = list(csv.reader((tmp_path / "curves_runs.csv").open()))
    assert runs_rows[1:] == [["copy", "a-run", "diverged", "12", "", "4.5", "11", "", "", "", "", "", "", ""],
                             ["copy", "b-run", "completed", "20", "1.5", "4.25", "", "0123abcd",
                              "2026-12-06T01:00:00Z", "2026-12-06T02:00:00Z", "abc+def", "11111111", "Xeon", "2"]]


def test_merge_keeps_the_recorded_runs_the_folders_lack(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    make_run(first, "a", [{"step": 10, "lr": 0.1, "val_loss": 2.0}], {"status": "completed", "steps_done": 10,
                                                                        "final_val_loss": 2.0}, "aaaa")
    make_run(first, "b", [{"step": 10, "lr": 0.1, "val_loss": 3.0}], {"status": "completed", "steps_done": 10,
                                                                        "final_val_loss": 3.0}, "bbbb")
    make_run(second, "b", [{"step": 10, "lr": 0.1, "val_loss": 2.5}], {"status": "completed", "steps_done": 10,
                                                                         "final_val_loss": 2.5}, "bbbb")
    make_run(second, "c", [{"step": 10, "lr": 0.1, "val_loss": 1.0}], {"status": "completed", "steps_done": 10,
                                                                         "final_val_loss": 1.0}, "cccc")
    out = tmp_path / "curves.csv"
    export(out, f"copy={first}")
    export(out, f"copy={second}", merge=True)
    # a kept from the record; b replaced by the folder's run; c added; sorted by run
    assert [r[1] + ":" + r[4] for r in list(csv.reader(out.open()))[1:]] == ["a:2.0", "b:2.5", "c:1.0"]
    assert [r[1] + ":" + r[7] for r in list(csv.reader((tmp_path / "curves_runs.csv").open()))[1:]] == \
        ["a:aaaa", "b:bbbb", "c:cccc"]
    export(out, f"copy={second}")  # without --merge the record is the folders' runs only
    assert [r[1] for r in list(csv.reader(out.open()))[1:]] == ["b", "c"]


def test_a_malformed_line_is_named(tmp_path):
    runs = tmp_path / "text"
    make_run(runs, "r", [], {"status": "completed"})
    (runs / "r" / "metrics.jsonl").write_text('{"step": 1, "val_loss": 2.0}\n{"step": 2,\n')
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path / "c.csv"), f"text={runs}"],
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert "r/metrics.jsonl:2" in done.stderr


def test_a_write_cut_off_midway_leaves_the_old_record(tmp_path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("export_val_curves", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    record = tmp_path / "curves.csv"
    module.write_atomically(record, ["task", "run"], [("copy", "a"), ("copy", "b")])

    def rows_then_a_kill():
        yield ("copy", "c")
        raise KeyboardInterrupt  # the process stopped in the middle of the file

    try:
        module.write_atomically(record, ["task", "run"], rows_then_a_kill())
    except KeyboardInterrupt:
        pass
    assert list(csv.reader(record.open())) == [["task", "run"], ["copy", "a"], ["copy", "b"]]
