#!/usr/bin/env bash
# A normlab sweep as a SLURM job array: one array task per grid point, each an ordinary
# `normlab sweep` of that one point (so the point's run directory has the name, fingerprint and
# resume behaviour the full sweep would give it), then one table of them all.
#
#   n=$(scripts/slurm_sweep.sh --count model.norm_placement=pre,post optim.lr=5e-4,1e-3 seed=1,2)
#   sbatch --array=0-$((n - 1)) --cpus-per-task=2 scripts/slurm_sweep.sh OUT_DIR CONFIG.toml \
#          model.norm_placement=pre,post optim.lr=5e-4,1e-3 seed=1,2 [--set key=value ...]
#   scripts/slurm_sweep.sh --collect OUT_DIR          # OUT_DIR/sweep.csv from every point's row
#
# Task K runs point K of the grid in normlab's order (the last axis fastest) into
# OUT_DIR/points/K/<point name>/, on $SLURM_CPUS_PER_TASK threads. A task that is run again
# reuses, resumes or restarts its point as `normlab sweep` does. Without SLURM, set
# SLURM_ARRAY_TASK_ID yourself. Values that contain commas (quoted TOML strings) are not supported.
# `normlab reproduce xiong` trains all its points as one sweep per dataset; run it as one job per
# experiment instead: --array=1-7 with `normlab reproduce xiong --only E$SLURM_ARRAY_TASK_ID --out DIR/E$SLURM_ARRAY_TASK_ID`.
set -euo pipefail
normlab="${NORMLAB:-$(cd "$(dirname "$0")/.." && pwd)/build/normlab}"

# The axes ("key=v1,v2,...") among the arguments; everything else is passed to `normlab sweep`.
axes=() rest=()
split_arguments() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --set|--jobs|--threads) rest+=("$1" "$2"); shift 2 ;;
      --*) rest+=("$1"); shift ;;
      *=*) axes+=("$1"); shift ;;
      *) echo "slurm_sweep: '$1' is not key=v1,v2,... nor an option of normlab sweep" >&2; exit 2 ;;
    esac
  done
}

count_points() {
  local n=1 axis values
  for axis in "${axes[@]}"; do
    IFS=, read -ra values <<<"${axis#*=}"
    n=$((n * ${#values[@]}))
  done
  echo "$n"
}

case "${1:-}" in
  --count)
    shift
    split_arguments "$@"
    count_points
    ;;
  --collect)
    out="${2:?usage: slurm_sweep.sh --collect OUT_DIR}"
    python3 - "$out" <<'PY'
import csv, glob, os, sys
out = sys.argv[1]
parts = sorted(glob.glob(os.path.join(out, "points", "*", "sweep.csv")),
               key=lambda p: int(os.path.basename(os.path.dirname(p))))
rows, header = [], None
for path in parts:
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        rows.extend(reader)
with open(os.path.join(out, "sweep.csv"), "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(header)
    writer.writerows(rows)
print(f"{os.path.join(out, 'sweep.csv')}: {len(rows)} points from {len(parts)} tasks")
PY
    ;;
  *)
    out="${1:?usage: slurm_sweep.sh OUT_DIR CONFIG.toml key=v1,v2 ... (see the comment at the top)}"
    config="${2:?usage: slurm_sweep.sh OUT_DIR CONFIG.toml key=v1,v2 ...}"
    shift 2
    split_arguments "$@"
    task="${SLURM_ARRAY_TASK_ID:?not an array task: set SLURM_ARRAY_TASK_ID (0 .. points - 1)}"
    total=$(count_points)
    [ "$task" -lt "$total" ] || { echo "slurm_sweep: task $task, but the grid has $total points" >&2; exit 2; }
    # Point `task` in mixed radix, the last axis fastest.
    point=() index=$task
    for ((a = ${#axes[@]} - 1; a >= 0; a--)); do
      IFS=, read -ra values <<<"${axes[a]#*=}"
      point=("${axes[a]%%=*}=${values[index % ${#values[@]}]}" "${point[@]}")
      index=$((index / ${#values[@]}))
    done
    exec "$normlab" sweep "$config" "${point[@]}" "${rest[@]}" --threads "${SLURM_CPUS_PER_TASK:-1}" \
      --out "$out/points/$task"
    ;;
esac
