#!/usr/bin/env bash
# Times devlint over a directory of model files next to tree-sitter parsing alone on one thread.
# Usage: bench/run_bench.sh [DIR] [BUILD_DIR]   (env: RUNS=3, JOBS= passes -j to devlint)
# Targets (README): devlint wall time <= 1.25 x parse-only time, peak RSS <= 300 MB.
set -euo pipefail
dir=${1:-/work/corpus/transformers}
build=${2:-build}
runs=${RUNS:-3}
jobs=${JOBS:-}
devlint="$build/devlint"
parse_only="$build/devlint-parse-only"
for tool in "$devlint" "$parse_only"; do
  [ -x "$tool" ] || { echo "bench: $tool not built (cmake --build $build)" >&2; exit 2; }
done
if [ ! -x /usr/bin/time ]; then
  # The bash keyword `time` cannot report peak RSS; GNU time (Debian package `time`) can.
  echo "bench: /usr/bin/time missing (GNU time, for peak RSS): apt-get install time" >&2
  exit 2
fi
[ -d "$dir" ] || { echo "bench: no directory $dir" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
find "$dir" -name '*.py' -type f | sort > "$tmp/files"
[ -s "$tmp/files" ] || { echo "bench: no *.py files under $dir" >&2; exit 2; }

# smaller A B: A < B, decimals; an empty B (no run yet) counts as +inf.
smaller() { [ -z "$2" ] || awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

best_parse=""
for _ in $(seq "$runs"); do
  out=$("$parse_only" < "$tmp/files")
  s=$(sed -E 's/.*seconds=([0-9.]+).*/\1/' <<<"$out")
  if smaller "$s" "$best_parse"; then best_parse=$s; fi
done
nfiles=$(sed -E 's/.*files=([0-9]+).*/\1/' <<<"$out")
lines=$(sed -E 's/.*lines=([0-9]+).*/\1/' <<<"$out")
bytes=$(sed -E 's/.*bytes=([0-9]+).*/\1/' <<<"$out")

# --no-cache: this measures the analysis; bench/cache_bench.sh measures the result cache.
cmd=("$devlint" check --no-cache --exit-zero --output-format concise)
[ -z "$jobs" ] || cmd+=(-j "$jobs")
cmd+=("$dir")
best_wall=""
peak_rss=0
for _ in $(seq "$runs"); do
  if ! /usr/bin/time -f '%e %M' -o "$tmp/time" "${cmd[@]}" > /dev/null 2> "$tmp/err"; then
    echo "bench: devlint failed: ${cmd[*]}" >&2
    tail -n 20 "$tmp/err" >&2
    exit 1
  fi
  read -r wall rss < "$tmp/time"
  if smaller "$wall" "$best_wall"; then best_wall=$wall; fi
  # Peak memory: the largest of the runs, so the target has to hold on every one.
  if [ "$rss" -gt "$peak_rss" ]; then peak_rss=$rss; fi
done

awk -v f="$nfiles" -v l="$lines" -v b="$bytes" -v p="$best_parse" -v w="$best_wall" \
  -v r="$peak_rss" -v runs="$runs" -v jobs="${jobs:-default}" -v cores="$(nproc)" 'BEGIN {
  if (p <= 0) p = 0.001
  if (w <= 0) w = 0.01
  ratio = w / p
  mb = r / 1024
  printf "files            %d\n", f
  printf "lines            %d\n", l
  printf "size             %.1f MB\n", b / 1e6
  printf "parse-only       %.2f s (tree-sitter, 1 thread, best of %d)\n", p, runs
  printf "devlint          %.2f s (wall, best of %d; -j %s, %d cores)\n", w, runs, jobs, cores
  printf "ratio            %.2f (target <= 1.25): %s\n", ratio, ratio <= 1.25 ? "ok" : "MISSED"
  printf "throughput       %.0f files/s, %.0f lines/s\n", f / w, l / w
  printf "peak RSS         %.0f MB (target <= 300): %s\n", mb, mb <= 300 ? "ok" : "MISSED"
}'
