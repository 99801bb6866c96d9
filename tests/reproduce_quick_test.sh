#!/usr/bin/env bash
# CI check of `normlab reproduce xiong --quick`: the whole quick suite finishes and writes its report
# and verdicts.json; Theorem 1's verdicts (what --quick shows robustly: Post-LN flat, Pre-LN about
# L^-1/2) are reproduced; every markdown table row has its header's number of cells (an unescaped
# '|' inside a cell would add one); verdicts.json has one well-formed object per verdict row.
set -euo pipefail
normlab="$1"; source_dir="$2"; out="$3"
rm -rf "$out"
"$normlab" reproduce xiong --quick --jobs 2 --quiet --out "$out" --configs "$source_dir/xiong/configs"
report="$out/report.md"
test -s "$report" || { echo "FAIL: no report at $report"; exit 1; }
for claim in E1a E1b; do
  line=$(grep -E "^\| $claim \|" "$report" || true)
  echo "$line"
  echo "$line" | grep -q '\*\*reproduced\*\*' || { echo "FAIL: $claim is not reproduced in $report"; exit 1; }
done
# Cells per row: count the '|' that are not escaped as '\|'; a table is a run of lines starting with '|'.
awk '
  /^\|/ { line = $0; gsub(/\\\|/, "", line); n = gsub(/\|/, "", line);
          if (!in_table) { cells = n; in_table = 1; start = NR }
          else if (n != cells) { printf "FAIL: line %d has %d separators, its table (line %d) %d\n", NR, n, start, cells; bad = 1 }
          next }
  { in_table = 0 }
  END { exit bad }' "$report"
/usr/bin/python3 - "$out/verdicts.json" "$report" <<'PY'
import json, re, sys
verdicts = json.load(open(sys.argv[1]))
rows = [l for l in open(sys.argv[2]) if re.match(r"^\| E\d", l)]
keys = {"id", "claim", "n_seeds", "steps", "estimate", "ci_low", "ci_high", "criterion", "verdict"}
assert len(verdicts) == len(rows), f"{len(verdicts)} verdicts in json, {len(rows)} rows in the table"
for v in verdicts:
    assert keys <= v.keys(), f"{v.get('id')}: missing {keys - v.keys()}"
    assert v["verdict"] in ("reproduced", "contradicted", "inconclusive"), v
    if v["ci_method"] != "bootstrap" and v["ci_low"] is not None and v["ci_high"] is not None:
        assert v["ci_low"] <= v["estimate"] <= v["ci_high"], v
print(f"verdicts.json: {len(verdicts)} verdicts, well formed")
PY
echo "reproduce --quick: report written, Theorem 1 reproduced, every table row complete"
