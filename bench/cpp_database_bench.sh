#!/usr/bin/env bash
# A directory of six LibTorch files with a compile_commands.json: `devlint check -j 2` next to the
# same six `clang++-14 -fsyntax-only` runs two at a time, with the database's flags and one
# shared precompiled header (built once with those flags). Cold: nothing precompiled yet
# (devlint builds its PCH for the database's flags, clang++ builds the shared one first); warm:
# the PCH is there (devlint --no-cache, so every file is parsed again). Best of RUNS for warm.
# Usage: bench/cpp_database_bench.sh [BUILD_DIR]   (env: RUNS=3)
# Target (issue 28): devlint warm <= 1.2 x clang++ warm.
set -euo pipefail
build=${1:-build}
runs=${RUNS:-3}
devlint="$(realpath "$build")/devlint"
root=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$devlint" ] || { echo "bench: $devlint not built (cmake --build $build)" >&2; exit 2; }
command -v clang++-14 >/dev/null || { echo "bench: clang++-14 missing (apt-get install clang-14)" >&2; exit 2; }
api=/usr/include/torch/csrc/api/include
[ -f "$api/torch/torch.h" ] || { echo "bench: LibTorch headers missing (apt-get install libtorch-dev)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
project=$work/project
mkdir -p "$project/src" "$project/build"
git -C "$project" init -q
files=(classifier_inference losses module_containers pipeline_two_gpus split_model tensor_sites)
flags=(-std=c++17 -isystem "$api" -DNDEBUG)
{
  echo "["
  sep=""
  for name in "${files[@]}"; do
    cp "$root/fixtures/cpp/$name.cpp" "$project/src/$name.cpp"
    printf '%s{"directory": "%s/build", "file": "%s/src/%s.cpp", "arguments": ["/usr/bin/c++", "-std=c++17", "-isystem", "%s", "-DNDEBUG", "-O2", "-c", "%s/src/%s.cpp", "-o", "%s.o"]}\n' \
      "$sep" "$project" "$project" "$name" "$api" "$project" "$name" "$name"
    sep=","
  done
  echo "]"
} >"$project/build/compile_commands.json"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

devlint_run() { # PCH_DIR
  DEVLINT_PCH_DIR=$1 "$devlint" check --isolated --no-cache --exit-zero -j 2 "$project/src" >/dev/null 2>"$work/devlint.err"
}
clang_pch() { # PCH
  printf '#include <torch/torch.h>\n#include <torch/script.h>\n' >"$work/pch.h"
  clang++-14 "${flags[@]}" -Wno-everything -fpch-instantiate-templates -x c++-header "$work/pch.h" -o "$1"
}
clang_run() { # PCH
  printf '%s\n' "${files[@]}" |
    xargs -P 2 -I{} clang++-14 "${flags[@]}" -fsyntax-only -Wno-everything -include-pch "$1" "$project/src/{}.cpp"
}

# Cold.
t0=$(now); devlint_run "$work/pch-devlint"; t1=$(now)
devlint_cold=$(elapsed "$t0" "$t1")
t0=$(now); clang_pch "$work/shared.pch"; clang_run "$work/shared.pch"; t1=$(now)
clang_cold=$(elapsed "$t0" "$t1")
# Warm: best of RUNS.
best() { sort -n | head -1; }
devlint_warm=$(for _ in $(seq "$runs"); do t0=$(now); devlint_run "$work/pch-devlint"; t1=$(now); elapsed "$t0" "$t1"; echo; done | best)
clang_warm=$(for _ in $(seq "$runs"); do t0=$(now); clang_run "$work/shared.pch"; t1=$(now); elapsed "$t0" "$t1"; echo; done | best)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "six files, compile_commands.json, -j 2 / two at a time"
echo "cold: devlint ${devlint_cold} s, clang++-14 (PCH + six) ${clang_cold} s: $(ratio "$devlint_cold" "$clang_cold")x"
echo "warm: devlint ${devlint_warm} s, clang++-14 ${clang_warm} s: $(ratio "$devlint_warm" "$clang_warm")x (target <= 1.2x)"
if grep -q "precompiled" "$work/devlint.err"; then
  echo "devlint said:"; grep "precompiled" "$work/devlint.err" | head -3
fi
