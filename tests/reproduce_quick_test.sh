#!/usr/bin/env bash
# CI check of `normlab reproduce xiong --quick` (issue: the quick suite runs in CI). The whole quick
# suite must finish and write its report; of its verdicts only what --quick shows robustly is asserted:
# Theorem 1's exponents (Post-LN flat, Pre-LN about -1/2), reproduced.
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
echo "reproduce --quick: report written, Theorem 1 exponents reproduced"
