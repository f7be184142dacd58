#!/usr/bin/env bash
# The result cache: a cold run (empty cache) against a warm re-check of the unchanged tree.
# Usage: bench/cache_bench.sh [DIR] [BUILD_DIR]   (env: RUNS=3, JOBS= passes -j to devlint)
# Target (README): the warm run costs at most a tenth of the cold one; both report the same.
set -euo pipefail
dir=${1:-/work/corpus/transformers}
build=${2:-build}
runs=${RUNS:-3}
jobs=${JOBS:-}
devlint="$build/devlint"
[ -x "$devlint" ] || { echo "bench: $devlint not built (cmake --build $build)" >&2; exit 2; }
[ -d "$dir" ] || { echo "bench: no directory $dir" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time missing: apt-get install time" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmd=("$devlint" check --exit-zero --output-format json --cache-dir "$tmp/cache")
[ -n "$jobs" ] && cmd+=(-j "$jobs")
smaller() { [ -z "$2" ] || awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
timed() { # timed OUTPUT -> prints seconds
  /usr/bin/time -f '%e' -o "$tmp/time" "${cmd[@]}" "$dir" > "$1" 2>/dev/null
  cat "$tmp/time"
}

best_cold="" best_warm=""
for _ in $(seq "$runs"); do
  rm -rf "$tmp/cache"
  s=$(timed "$tmp/cold.json")
  if smaller "$s" "$best_cold"; then best_cold=$s; fi
  s=$(timed "$tmp/warm.json")
  if smaller "$s" "$best_warm"; then best_warm=$s; fi
  cmp -s "$tmp/cold.json" "$tmp/warm.json" || { echo "bench: warm findings differ from cold" >&2; exit 1; }
done
findings=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$tmp/cold.json")
entries=$(find "$tmp/cache" -name '*.json' | wc -l)
size=$(du -sh "$tmp/cache" | cut -f1)
ratio=$(awk -v w="$best_warm" -v c="$best_cold" 'BEGIN { printf "%.3f", (c > 0 ? w / c : 0) }')
printf '| cold s | warm s | warm/cold | findings | cache entries | cache size |\n'
printf '| --- | --- | --- | --- | --- | --- |\n'
printf '| %s | %s | %s | %s | %s | %s |\n' "$best_cold" "$best_warm" "$ratio" "$findings" "$entries" "$size"
if awk -v r="$ratio" 'BEGIN { exit !(r <= 0.1) }'; then
  echo "target met: warm <= 0.1 x cold"
else
  echo "target missed: warm > 0.1 x cold"
  exit 1
fi
