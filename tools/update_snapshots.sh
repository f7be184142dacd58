#!/usr/bin/env bash
# Rewrites every fixture snapshot (fixtures/**/check.snap) and README.md's example output from
# what devlint prints now, then lists what changed: review it with `git diff`, commit it if it is
# right. The check itself is ctest's `snapshots_python`, `snapshots_cpp` and `snapshots_readme`
# (tests/snapshots.sh).
# usage: tools/update_snapshots.sh [BUILD_DIR]   (default: build)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-$root/build}")
devlint="$build/devlint"
[ -x "$devlint" ] || { echo "no devlint in $build: build it first (cmake --build $build)"; exit 2; }

status=0
bash "$root/tests/snapshots.sh" "$devlint" "$root" python --update || status=1
# The C++ fixtures need a devlint built with -DDEVLINT_CPP=ON; they share the tests' precompiled
# LibTorch header.
if grep -q '^DEVLINT_CPP:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  DEVLINT_PCH_DIR="$build/pch" bash "$root/tests/snapshots.sh" "$devlint" "$root" cpp --update ||
    status=1
else
  echo "skipped: the C++ snapshot (this build has no C++ frontend)"
fi
bash "$root/tests/snapshots.sh" "$devlint" "$root" readme --update || status=1
git -C "$root" status --short -- fixtures README.md
exit "$status"
