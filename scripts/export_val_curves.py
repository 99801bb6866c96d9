#!/usr/bin/env python3
"""Write every run's validation curve as one CSV, for the record in docs/xiong/data/.

    scripts/export_val_curves.py --out val_curves.csv copy=/work/xiong-v4/copy text=/work/xiong-v4/text

Each TASK=DIR reads the finished runs under DIR (one per folder, those with a summary.json: a run
still training is left out) and writes a row per evaluation: task, run, step, lr, val_loss. Beside
it, OUT with "_runs" before the suffix lists each run once: task, run, status, steps_done, and
final_val_loss and diverged_at_step from its summary.json, and initial_loss, the train loss of
step 1 (measured before the first update: the loss at initialization, which a diverged run counts
as). `normlab reproduce xiong --confirmatory --analyse-only --record DIR` reads both back
(xiong/run_record.h). Runs are sorted by name and rows by step, so the files are
the same for the same runs. Standard library only.
"""
import argparse
import csv
import json
import pathlib
import sys


def curve_rows(task, run_dir):
    """The run's validation rows, and its train loss of step 1 (None when not logged)."""
    rows, initial_loss = [], None
    with open(run_dir / "metrics.jsonl", encoding="utf-8") as f:
        for line_number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"export_val_curves: {run_dir}/metrics.jsonl:{line_number}: {e}")
            if row.get("val_loss") is not None:
                rows.append((task, run_dir.name, row["step"], row.get("lr"), row["val_loss"]))
            if row.get("step") == 1 and row.get("train_loss") is not None:
                initial_loss = row["train_loss"]
    return sorted(rows, key=lambda r: r[2]), initial_loss


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("tasks", nargs="+", metavar="TASK=DIR")
    args = parser.parse_args()
    rows, summaries = [], []
    for spec in args.tasks:
        task, sep, directory = spec.partition("=")
        if not sep:
            sys.exit(f"export_val_curves: expected TASK=DIR, got '{spec}'")
        runs = sorted(p.parent for p in pathlib.Path(directory).glob("*/summary.json"))
        if not runs:
            sys.exit(f"export_val_curves: no finished run (*/summary.json) under {directory}")
        for run_dir in runs:
            curve, initial_loss = curve_rows(task, run_dir)
            rows.extend(curve)
            summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
            summaries.append((task, run_dir.name, summary.get("status"), summary.get("steps_done"),
                              summary.get("final_val_loss"), initial_loss, summary.get("diverged_at_step")))
    with open(args.out, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["task", "run", "step", "lr", "val_loss"])
        writer.writerows(rows)
    out = pathlib.Path(args.out)
    runs_out = out.with_name(out.stem + "_runs" + out.suffix)
    with open(runs_out, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["task", "run", "status", "steps_done", "final_val_loss", "initial_loss",
                         "diverged_at_step"])
        writer.writerows(summaries)
    print(f"{args.out}: {len(rows)} rows; {runs_out}: {len(summaries)} runs")


if __name__ == "__main__":
    main()
