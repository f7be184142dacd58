#!/usr/bin/env bash
# Deterministic fuzzing for CI: a fixed seed and a fixed number of runs from the same seeds, so a
# red run is always a real defect that `fuzz/run_fuzzers.sh` or the crash file reproduces.
# Fails on any crash, leak, timeout, out-of-memory or broken invariant (the targets abort).
# Usage: ci_fuzz.sh BINARY RUNS DICT SEED_DIR...
set -euo pipefail
# Clang crashes recovered from leave their objects behind on purpose (lsan.supp).
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(cd "$(dirname "$0")" && pwd)/lsan.supp"
binary=$1 runs=$2 dict=$3
shift 3
work=$(mktemp -d "${TMPDIR:-/tmp}/devlint-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus" "$work/artifacts"
seeds=()
for d in "$@"; do [ -d "$d" ] && seeds+=("$d"); done
# -timeout: one input taking 25 s is a hang; -rss_limit_mb: a blow-up, not a bigger machine.
if ! "$binary" -seed=1 -runs="$runs" -dict="$dict" -max_len=65536 -timeout=25 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
  "$work/corpus" "${seeds[@]}" >"$work/log" 2>&1; then
  tail -n 80 "$work/log"
  for crash in "$work"/artifacts/*; do
    [ -f "$crash" ] || continue
    echo "--- input that failed ($crash), base64; save it under fuzz/regressions/:"
    base64 "$crash" | head -c 20000
    echo
  done
  exit 1
fi
grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^Done' "$work/log" || tail -n 5 "$work/log"
