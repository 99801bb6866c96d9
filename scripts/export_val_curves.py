#!/usr/bin/env python3
"""Write every run's validation curve as one CSV, for the record in docs/xiong/data/.

    scripts/export_val_curves.py [--merge] --out val_curves.csv copy=/work/xiong-v4/copy text=/work/xiong-v4/text

Each TASK=DIR reads the finished runs under DIR (one per folder, those with a summary.json: a run
still training is left out) and writes a row per evaluation: task, run, step, lr, val_loss. Beside
it, OUT with "_runs" before the suffix lists each run once: task, run, status, steps_done, and
final_val_loss and diverged_at_step from its summary.json, and initial_loss, the train loss of
step 1 (measured before the first update: the loss at initialization, which a diverged run counts
as), the fingerprint of the config it was made with (its fingerprint.txt), and its provenance from
summary.json (started_utc, finished_utc, and the commit, code_crc32, cpu and threads of its
sittings, joined by "+" when a resume changed them; empty for a run made before normlab wrote
them). `normlab
reproduce xiong [--confirmatory] --analyse-only --record DIR` reads both back (xiong/run_record.h);
without --analyse-only the suite trains only the runs the record lacks. --merge keeps the runs
already in OUT that the folders do not hold (a grid recorded over several machines). Runs are
sorted by task and name and rows by step, so the files are the same for the same runs. Standard
library only.
"""
import argparse
import csv
import json
import os
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


RUN_COLUMNS = ["task", "run", "status", "steps_done", "final_val_loss", "initial_loss", "diverged_at_step",
               "fingerprint", "started_utc", "finished_utc", "commit", "code_crc32", "cpu", "threads"]


def provenance(summary):
    """(started_utc, finished_utc, commit, code_crc32, cpu, threads) from summary.json: each sitting's
    value, joined by "+" in order when they differ; None where the summary has no provenance."""
    sittings = summary.get("sittings") or []

    def joined(key):
        values = []
        for sitting in sittings:
            if str(sitting.get(key)) not in values:
                values.append(str(sitting.get(key)))
        return "+".join(values) if values else None
    return (summary.get("started_utc"), summary.get("finished_utc"), joined("commit"), joined("code_crc32"),
            joined("cpu"), joined("threads"))


def exported_runs(specs):
    """(curve rows, run rows) of the finished runs under each TASK=DIR."""
    rows, summaries = [], []
    for spec in specs:
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
            fingerprint_file = run_dir / "fingerprint.txt"
            fingerprint = fingerprint_file.read_text(encoding="utf-8").strip() if fingerprint_file.exists() else None
            summaries.append((task, run_dir.name, summary.get("status"), summary.get("steps_done"),
                              summary.get("final_val_loss"), initial_loss, summary.get("diverged_at_step"),
                              fingerprint) + provenance(summary))
    return rows, summaries


def recorded_runs(curves_path, runs_path, keep_out):
    """The rows of an existing record, without the runs whose (task, run) is in keep_out."""
    def read(path, width):
        if not path.exists():
            return []
        with open(path, newline="", encoding="utf-8") as f:
            table = list(csv.reader(f))[1:]
        return [tuple(r) + ("",) * (width - len(r)) for r in table if tuple(r[:2]) not in keep_out]
    return read(curves_path, 5), read(runs_path, len(RUN_COLUMNS))


def write_atomically(path, header, rows):
    """Writes the CSV beside PATH, then renames it over PATH: a kill mid-write leaves the old file."""
    partial = path.with_name(path.name + ".partial")
    with open(partial, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
        f.flush()
        os.fsync(f.fileno())
    os.replace(partial, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--merge", action="store_true", help="keep the runs already in OUT that the folders lack")
    parser.add_argument("tasks", nargs="+", metavar="TASK=DIR")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    runs_out = out.with_name(out.stem + "_runs" + out.suffix)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows, summaries = exported_runs(args.tasks)
    if args.merge:
        old_rows, old_summaries = recorded_runs(out, runs_out, {(s[0], s[1]) for s in summaries})
        rows, summaries = rows + old_rows, summaries + old_summaries
    rows.sort(key=lambda r: (r[0], r[1], float(r[2])))
    summaries.sort(key=lambda r: (r[0], r[1]))
    write_atomically(out, ["task", "run", "step", "lr", "val_loss"], rows)
    write_atomically(runs_out, RUN_COLUMNS, summaries)
    print(f"{args.out}: {len(rows)} rows; {runs_out}: {len(summaries)} runs")


if __name__ == "__main__":
    main()
