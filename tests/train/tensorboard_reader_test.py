"""TensorBoard's own reader loads normlab's event files (log.tensorboard = true).

    tensorboard_reader_test.py NORMLAB_BINARY WORK_DIR

Runs tiny trainings and loads each run directory with
tensorboard.backend.event_processing.event_accumulator.EventAccumulator, then checks that every
scalar tag, step and value is the number metrics.jsonl and grad_norms.csv hold (as a float32),
with no tag or step missing, extra or repeated (tag names: train/tensorboard.h):
  1. a plain run;
  2. a run killed (SIGKILL, io/fault_injection.h) while writing the checkpoint after update 6,
     with events up to update 6 on disk and its last checkpoint after update 3, then resumed;
  3. a copy of run 1's event file with its last record cut short, as a kill in mid-write leaves it:
     everything but the last event is read.
Exits 77 (ctest: skipped) when the tensorboard package cannot be imported.
"""
import csv
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys

try:
    from tensorboard.backend.event_processing import event_accumulator
except ImportError as error:
    print(f"skipped: the tensorboard package is not importable ({error}); scripts/test makes the venv")
    sys.exit(77)

CONFIG = """
[model]
d_model = 16
n_heads = 2
n_layers = 2
d_ff = 32
context_length = 8
[data]
source = "copy"
copy_length = 4
copy_vocab = 12
[train]
name = "plain"
out_dir = "{out_dir}"
steps = 12
batch_size = 2
context = 8
threads = 1
checkpoint_every = 3
[log]
every = 1
eval_every = 4
eval_batches = 1
grad_norm_every = 2
tensorboard = true
"""

METRIC_TAGS = {"train_loss": "train/loss", "val_loss": "val/loss"}


def as_float32(value):
    return struct.unpack("f", struct.pack("f", value))[0]


def expected_scalars(run_dir):
    """{tag: {step: value}} from metrics.jsonl and grad_norms.csv, each step once."""
    expected = {}

    def add(tag, step, value):
        steps = expected.setdefault(tag, {})
        assert step not in steps, f"{run_dir}: {tag} step {step} logged twice"
        steps[step] = value

    with open(os.path.join(run_dir, "metrics.jsonl")) as lines:
        for line in lines:
            record = json.loads(line)
            for key, value in record.items():
                if key == "step" or isinstance(value, (str, bool)):
                    continue
                add(METRIC_TAGS.get(key, "train/" + key), record["step"], math.nan if value is None else value)
    with open(os.path.join(run_dir, "grad_norms.csv")) as table:
        rows = list(csv.reader(table))
    for row in rows[1:]:
        for column, cell in zip(rows[0][1:], row[1:]):
            layer = column.removeprefix("residual_rms.")
            tag = "residual_rms/" + layer if layer != column else "grad_norm/" + column
            add(tag, int(row[0]), float(cell))
    return expected


def loaded_scalars(path):
    """{tag: [(step, value), ...]} as TensorBoard reads them, orphaned steps not purged."""
    reader = event_accumulator.EventAccumulator(
        path, size_guidance={event_accumulator.SCALARS: 0}, purge_orphaned_data=False)
    reader.Reload()
    assert reader.file_version == 2.0, f"{path}: file_version {reader.file_version}"
    return {tag: [(e.step, e.value) for e in reader.Scalars(tag)] for tag in reader.Tags()["scalars"]}


def same_value(got, want):
    want = as_float32(want)
    return (math.isnan(got) and math.isnan(want)) or got == want


def check(path, expected, what):
    loaded = loaded_scalars(path)
    problems = []
    if set(loaded) != set(expected):
        problems.append(f"tags missing {sorted(set(expected) - set(loaded))}, extra {sorted(set(loaded) - set(expected))}")
    for tag in sorted(set(loaded) & set(expected)):
        steps = [step for step, _ in loaded[tag]]
        if steps != sorted(expected[tag]):
            problems.append(f"{tag}: steps {steps}, expected {sorted(expected[tag])}")
            continue
        for step, value in loaded[tag]:
            if not same_value(value, expected[tag][step]):
                problems.append(f"{tag} step {step}: {value!r}, expected {as_float32(expected[tag][step])!r}")
    if problems:
        sys.exit(f"FAIL {what}:\n  " + "\n  ".join(problems[:20]))
    count = sum(len(v) for v in expected.values())
    print(f"ok {what}: {len(expected)} tags, {count} scalars")
    return loaded


def normlab(binary, args, env=None):
    return subprocess.run([binary, "train", "--quiet", *args], env={**os.environ, **(env or {})},
                          capture_output=True, text=True)


def event_file(run_dir):
    files = sorted(f for f in os.listdir(run_dir) if f.startswith("events.out.tfevents."))
    assert len(files) == 1, f"{run_dir}: event files {files}"
    return os.path.join(run_dir, files[0])


def fault_point_in_checkpoint(binary, config, step):
    """The number of the first file-system step of the checkpoint written after `step` steps."""
    traced = normlab(binary, [config, "train.name=traced"], {"NORMLAB_FAULT_INJECT": "trace"})
    assert traced.returncode == 0, traced.stderr
    for line in traced.stderr.splitlines():
        found = re.match(rf"fault point (\d+): \S+ .*/checkpoints/step-0*{step}\.", line)
        if found:
            return int(found.group(1))
    sys.exit(f"no fault point writes checkpoint step-{step}:\n{traced.stderr[-2000:]}")


def main():
    binary, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    runs = os.path.join(work, "runs")
    config = os.path.join(work, "tiny.toml")
    with open(config, "w") as f:
        f.write(CONFIG.format(out_dir=runs))

    plain = os.path.join(runs, "plain")
    done = normlab(binary, [config])
    assert done.returncode == 0, done.stderr
    check(plain, expected_scalars(plain), "plain run")

    victim = os.path.join(runs, "victim")
    kill_at = fault_point_in_checkpoint(binary, config, 6)
    killed = normlab(binary, [config, "train.name=victim"], {"NORMLAB_FAULT_INJECT": f"kill@{kill_at}"})
    assert killed.returncode == -9, f"expected SIGKILL, got {killed.returncode}: {killed.stderr}"
    before = loaded_scalars(victim)
    assert [s for s, _ in before["train/loss"]] == list(range(1, 7)), before["train/loss"]
    resumed = normlab(binary, ["--resume", victim])
    assert resumed.returncode == 0, resumed.stderr
    event_file(victim)  # still one file
    check(victim, expected_scalars(victim), "killed after update 6, resumed from update 3")

    cut = os.path.join(work, "cut")
    os.makedirs(cut)
    source = event_file(plain)
    with open(source, "rb") as f:
        data = f.read()
    with open(os.path.join(cut, os.path.basename(source)), "wb") as f:
        f.write(data[:-7])  # the last record's data CRC and a few data bytes lost
    expected = expected_scalars(plain)
    # The last event is update 12's metrics (with the final val loss). Update 12's gradient norms
    # (the last update is always logged) were written earlier in the step, and survive.
    for tag, steps in expected.items():
        if not tag.startswith(("grad_norm/", "residual_rms/")):
            steps.pop(12, None)
    check(cut, {tag: steps for tag, steps in expected.items() if steps}, "last record cut short")


if __name__ == "__main__":
    main()
