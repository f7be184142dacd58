#!/usr/bin/env bash
# Times devlint on one LibTorch translation unit next to `clang++-14 -fsyntax-only` with the same
# flags and the same precompiled header (devlint's shared one), best of RUNS, with peak RSS.
# Usage: bench/cpp_bench.sh [FILE.cpp] [BUILD_DIR]   (env: RUNS=3)
# Target (issue 14): devlint wall time <= 1.1 x clang++ -fsyntax-only.
set -euo pipefail
file=${1:-fixtures/cpp/pipeline_two_gpus.cpp}
build=${2:-build}
runs=${RUNS:-3}
devlint="$build/devlint"
[ -x "$devlint" ] || { echo "bench: $devlint not built (cmake --build $build)" >&2; exit 2; }
command -v clang++-14 >/dev/null || { echo "bench: clang++-14 missing (apt-get install clang-14)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time missing (apt-get install time)" >&2; exit 2; }
[ -f "$file" ] || { echo "bench: no file $file" >&2; exit 2; }

export DEVLINT_PCH_DIR=${DEVLINT_PCH_DIR:-$build/pch}
# The first run builds the precompiled header if it is not there yet; it is not timed.
"$devlint" check --isolated --no-cache --exit-zero "$file" >/dev/null
pch=$(ls -t "$DEVLINT_PCH_DIR"/torch-*.pch | head -1)
api=/usr/include/torch/csrc/api/include
flags=(-std=c++17 -fsyntax-only -Wno-everything -fno-caret-diagnostics -isystem "$api"
  -include-pch "$pch")

smaller() { [ -z "$2" ] || awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
best() { # best "wall rss" of RUNS runs of the command
  local best_wall="" best_rss=""
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e %M" -o "$tmp" "$@" >/dev/null 2>&1 || true
    read -r wall rss <"$tmp"
    if smaller "$wall" "$best_wall"; then best_wall=$wall best_rss=$rss; fi
  done
  echo "$best_wall $best_rss"
}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
read -r clang_wall clang_rss < <(best clang++-14 "${flags[@]}" "$file")
read -r devlint_wall devlint_rss < <(best "$devlint" check --isolated --no-cache --exit-zero "$file")
ratio=$(awk -v a="$devlint_wall" -v b="$clang_wall" 'BEGIN { printf "%.2f", a / b }')
echo "file: $file (precompiled header: $pch)"
echo "clang++-14 -fsyntax-only: ${clang_wall} s, peak RSS $((clang_rss / 1024)) MB"
echo "devlint check:            ${devlint_wall} s, peak RSS $((devlint_rss / 1024)) MB"
echo "ratio: ${ratio}x (target <= 1.1x)"
