#!/usr/bin/env bash
# Times devlint over a directory of model files next to tree-sitter parsing alone on one thread.
# Usage: bench/run_bench.sh [DIR] [BUILD_DIR]   (env: RUNS=3, JOBS= passes -j to the all-cores run)
# Targets (README): devlint wall time <= 0.50 x parse-only time on all cores (two), <= 1.00 x with
# -j 1 (one thread), peak RSS <= 300 MB.
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
# Two configurations: every core (JOBS, default one thread per core) and one thread (-j 1).
# time_devlint JOBS: best wall and best CPU (user+sys) of RUNS runs; peak RSS into peak_rss.
peak_rss=0
time_devlint() {
  local cmd=("$devlint" check --no-cache --exit-zero --output-format concise)
  [ -z "$1" ] || cmd+=(-j "$1")
  cmd+=("$dir")
  best_wall=""
  best_cpu=""
  for _ in $(seq "$runs"); do
    if ! /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "${cmd[@]}" > /dev/null 2> "$tmp/err"; then
      echo "bench: devlint failed: ${cmd[*]}" >&2
      tail -n 20 "$tmp/err" >&2
      exit 1
    fi
    read -r wall user sys rss < "$tmp/time"
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')
    if smaller "$wall" "$best_wall"; then best_wall=$wall; fi
    if smaller "$cpu" "$best_cpu"; then best_cpu=$cpu; fi
    # Peak memory: the largest of the runs, so the target has to hold on every one.
    if [ "$rss" -gt "$peak_rss" ]; then peak_rss=$rss; fi
  done
}
time_devlint "$jobs"
wall_all=$best_wall
cpu_all=$best_cpu
time_devlint 1
wall_one=$best_wall
cpu_one=$best_cpu

awk -v f="$nfiles" -v l="$lines" -v b="$bytes" -v p="$best_parse" -v wa="$wall_all" \
  -v w1="$wall_one" -v ca="$cpu_all" -v c1="$cpu_one" -v r="$peak_rss" -v runs="$runs" \
  -v jobs="${jobs:-default}" -v cores="$(nproc)" 'BEGIN {
  if (p <= 0) p = 0.001
  if (wa <= 0) wa = 0.01
  if (w1 <= 0) w1 = 0.01
  ra = wa / p
  r1 = w1 / p
  mb = r / 1024
  printf "files            %d\n", f
  printf "lines            %d\n", l
  printf "size             %.1f MB\n", b / 1e6
  printf "parse-only       %.2f s (tree-sitter, 1 thread, best of %d)\n", p, runs
  printf "devlint          %.2f s (wall, best of %d; -j %s, %d cores), %.2f s CPU\n", wa, runs,
    jobs, cores, ca
  printf "devlint -j 1     %.2f s (wall, best of %d), %.2f s CPU\n", w1, runs, c1
  printf "ratio            %.2f (all cores; target <= 0.50): %s\n", ra, ra <= 0.5 ? "ok" : "MISSED"
  printf "ratio -j 1       %.2f (one thread; target <= 1.00): %s\n", r1, r1 <= 1.0 ? "ok" : "MISSED"
  printf "throughput       %.0f files/s, %.0f lines/s\n", f / wa, l / wa
  printf "peak RSS         %.0f MB (target <= 300): %s\n", mb, mb <= 300 ? "ok" : "MISSED"
  if (cores < 2) print "note             one core: the all-cores target assumes two"
}'
