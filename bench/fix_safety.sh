#!/usr/bin/env bash
# Fix safety over real model code: runs `devlint check --fix` on a copy of DIR and checks that
#   1. every file that compiled before still compiles (python3 -m py_compile);
#   2. a second `--fix` changes nothing (its --diff is empty);
#   3. no (file, rule) has more findings after the fixes than before;
#   4. the fix loop dropped no fix (stderr names the rule of each one it dropped; exit code 2).
# Usage: bench/fix_safety.sh [DIR] [BUILD_DIR]   (defaults: /work/corpus/transformers, build)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_fix_setup "$@"
cd "$tmp/tree"

compiles() { # prints the files under . that py_compile accepts
  find . -name '*.py' -type f | sort | while read -r f; do
    python3 -c 'import sys; compile(open(sys.argv[1], "rb").read(), sys.argv[1], "exec")' "$f" \
      2>/dev/null && echo "$f"
  done
}
counts() { # "file code count" per (file, rule) from a JSON report
  python3 -c 'import json, sys, collections
c = collections.Counter((f["filename"], f["code"]) for f in json.load(open(sys.argv[1])))
for (f, code), n in sorted(c.items()): print(f, code, n)' "$1"
}

compiles > "$tmp/compiled.before"
"$devlint" check --isolated --exit-zero --output-format json . > "$tmp/before.json"
start=$(date +%s.%N)
set +e
"$devlint" check --isolated --fix --show-fixes --output-format json . > "$tmp/after.json" \
  2> "$tmp/fix.stderr"
fix_exit=$?
set -e
elapsed=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
compiles > "$tmp/compiled.after"
"$devlint" check --isolated --exit-zero --output-format json . > "$tmp/after.json"
set +e
"$devlint" check --isolated --diff . > "$tmp/second.diff" 2>/dev/null
set -e

counts "$tmp/before.json" > "$tmp/counts.before"
counts "$tmp/after.json" > "$tmp/counts.after"
grown=$(awk 'NR == FNR { before[$1 " " $2] = $3; next }
             $3 > before[$1 " " $2] + 0 { print $1, $2, before[$1 " " $2] + 0, "->", $3 }' \
        "$tmp/counts.before" "$tmp/counts.after")
broken=$(comm -23 "$tmp/compiled.before" "$tmp/compiled.after")
findings_before=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$tmp/before.json")
fixable=$(python3 -c 'import json,sys; print(sum(1 for f in json.load(open(sys.argv[1])) if f["fix"]))' "$tmp/before.json")
findings_after=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$tmp/after.json")
changed=$(diff -rq "$dir" . | grep -c '^Files' || true)
dropped=$(grep -c 'was not applied' "$tmp/fix.stderr" || true)
second_hunks=$(grep -c '^@@' "$tmp/second.diff" || true)

echo "files: $(find . -name '*.py' | wc -l), compiling before: $(wc -l < "$tmp/compiled.before")"
echo "findings before: $findings_before ($fixable with a fix), after --fix: $findings_after"
echo "--fix: exit $fix_exit in ${elapsed}s, files changed: $changed, fixes dropped: $dropped"
echo "files that no longer compile: $(printf '%s' "$broken" | grep -c . || true)"
echo "second --fix: $second_hunks hunk(s)"
echo "(file, rule) pairs with more findings after --fix: $(printf '%s' "$grown" | grep -c . || true)"
status=0
[ -z "$broken" ] || { echo "no longer compile:"; echo "$broken"; status=1; }
[ "$second_hunks" -eq 0 ] || { echo "second --fix would change:"; head -40 "$tmp/second.diff"; status=1; }
[ -z "$grown" ] || { echo "findings added:"; echo "$grown"; status=1; }
[ "$dropped" -eq 0 ] || { echo "dropped fixes:"; grep 'was not applied' "$tmp/fix.stderr"; status=1; }
[ "$fix_exit" -le 1 ] || { echo "--fix exited with $fix_exit:"; tail -5 "$tmp/fix.stderr"; status=1; }
[ "$status" -eq 0 ] && echo "fix safety: OK" || echo "fix safety: FAILED"
exit "$status"
