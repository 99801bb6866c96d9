#!/usr/bin/env bash
# CI check of `normlab reproduce xiong --quick`: the whole quick suite finishes and writes its report
# and verdicts.json. It asserts structure, and only the verdicts the quick grid can decide and the
# full suite agrees on (Theorem 1: Post-LN flat over L >= 6, Pre-LN decaying with L, one-sided);
# never a training verdict, which the quick grid's toy models cannot decide the way the full run
# does. Every markdown table row has its header's number of cells (an unescaped '|' inside a cell
# would add one); verdicts.json has one well-formed object per verdict row, with task and schedule
# on every training claim and Holm's p beside each p-value; every figure the report shows exists.
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
text = open(sys.argv[2]).read()
table = text[text.index("## Verdicts"):text.index("\nCriteria:")]
rows = [l for l in table.splitlines() if re.match(r"^\| E\d", l)]
keys = {"id", "claim", "n_seeds", "steps", "estimate", "ci_low", "ci_high", "criterion", "verdict"}
assert len(verdicts) == len(rows), f"{len(verdicts)} verdicts in json, {len(rows)} rows in the table"
for v in verdicts:
    assert keys <= v.keys(), f"{v.get('id')}: missing {keys - v.keys()}"
    assert v["verdict"] in ("reproduced", "contradicted", "inconclusive"), v
    if v["ci_method"] not in ("bootstrap", "KM median ratio bootstrap") and v["ci_low"] is not None and v["ci_high"] is not None:
        assert v["ci_low"] <= v["estimate"] <= v["ci_high"], v
    if v["steps"] > 0:
        assert v["task"] in ("copy", "text", "translate", "mlm"), v
        assert v["schedule"], v
    if v["p_value"] is not None:
        assert v["p_holm"] is not None and v["p_holm"] >= v["p_value"] - 1e-12, v
ids = {v["id"] for v in verdicts}
for prefix in ("E1a", "E1b", "E3a@", "E3a'@", "E3c@", "E3d@", "E3h@", "E3a.text@", "E3d.text@", "E4a.", "E8", "E10a.", "E10b.warmup@", "E10b.match@", "E10c"):
    assert any(i.startswith(prefix) for i in ids), f"no verdict {prefix}* in {sorted(ids)}"
print(f"verdicts.json: {len(verdicts)} verdicts, well formed")
PY
# Every figure the report shows is there, and every figure written is shown.
grep -o 'figures/[A-Za-z0-9_.@-]*\.svg' "$report" | sort -u > "$out/shown.txt"
(cd "$out" && ls figures/*.svg | sort -u) > "$out/written.txt"
while read -r f; do test -s "$out/$f" || { echo "FAIL: $f is shown but missing"; exit 1; }; done < "$out/shown.txt"
comm -13 "$out/shown.txt" "$out/written.txt" | grep . && { echo "FAIL: figures written but not referenced"; exit 1; }
echo "reproduce --quick: report written, Theorem 1 reproduced, every table row complete"
