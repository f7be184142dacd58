#!/usr/bin/env bash
# Times devlint over a directory of model files next to tree-sitter parsing alone on one thread.
# Usage: bench/run_bench.sh [DIR] [BUILD_DIR]
# Targets (README): devlint wall time <= 1.25 x parse-only time, peak RSS <= 300 MB.
set -euo pipefail
dir=${1:-/work/corpus/transformers}
build=${2:-build}
runs=${RUNS:-3}
devlint="$build/devlint"
parse_only="$build/devlint-parse-only"
for tool in "$devlint" "$parse_only"; do
  [ -x "$tool" ] || { echo "bench: $tool not built (cmake --build $build)" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time missing (apt-get install time)" >&2; exit 2; }
[ -d "$dir" ] || { echo "bench: no directory $dir" >&2; exit 2; }

files=$(mktemp)
trap 'rm -f "$files"' EXIT
find "$dir" -name '*.py' | sort > "$files"

best_parse=""
for _ in $(seq "$runs"); do
  out=$("$parse_only" < "$files")
  s=$(sed -E 's/.*seconds=([0-9.]+).*/\1/' <<<"$out")
  if [ -z "$best_parse" ] || awk "BEGIN{exit !($s < $best_parse)}"; then best_parse=$s; fi
done
nfiles=$(sed -E 's/.*files=([0-9]+).*/\1/' <<<"$out")
lines=$(sed -E 's/.*lines=([0-9]+).*/\1/' <<<"$out")
bytes=$(sed -E 's/.*bytes=([0-9]+).*/\1/' <<<"$out")

best_wall=""
best_rss=""
for _ in $(seq "$runs"); do
  /usr/bin/time -f '%e %M' -o /tmp/devlint_bench_time "$devlint" check --exit-zero \
    --output-format concise "$dir" > /dev/null 2>&1
  read -r wall rss < /tmp/devlint_bench_time
  if [ -z "$best_wall" ] || awk "BEGIN{exit !($wall < $best_wall)}"; then best_wall=$wall; fi
  if [ -z "$best_rss" ] || [ "$rss" -lt "$best_rss" ]; then best_rss=$rss; fi
done

awk -v f="$nfiles" -v l="$lines" -v b="$bytes" -v p="$best_parse" -v w="$best_wall" \
    -v r="$best_rss" 'BEGIN {
  ratio = w / p
  printf "files            %d\n", f
  printf "lines            %d\n", l
  printf "size             %.1f MB\n", b / 1e6
  printf "parse-only       %.2f s (tree-sitter, 1 thread)\n", p
  printf "devlint          %.2f s (wall, best of runs)\n", w
  printf "ratio            %.2f (target <= 1.25): %s\n", ratio, ratio <= 1.25 ? "ok" : "MISSED"
  printf "throughput       %.0f files/s, %.0f lines/s\n", f / w, l / w
  printf "peak RSS         %.0f MB (target <= 300): %s\n", r / 1024, r / 1024 <= 300 ? "ok" : "MISSED"
}'
