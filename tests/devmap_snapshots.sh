#!/usr/bin/env bash
# `devlint devmap` snapshots: every fixtures/devmap/*/devmap.snap holds what `devlint devmap
# --isolated DIR` prints for its package (run from the repository root, relative paths), with the
# exit code; compared byte for byte. The composite models (issue 25) pin here that a sub-model is
# sized, or listed as not built with the total a lower bound, never left out silently. A
# `devmap.args` beside the snapshot replaces DIR with its words (a model inside a miniature
# transformers tree, --model-class, --dtype ...), paths relative to the repository root.
# usage: devmap_snapshots.sh DEVLINT SOURCE_DIR [--update]   (--update rewrites the snapshots)
set -u
devlint=$(realpath "${1:?usage: devmap_snapshots.sh DEVLINT SOURCE_DIR [--update]}")
cd "${2:?missing SOURCE_DIR}" || exit 2
export DEVLINT_PYTHON=false NO_COLOR=1 LC_ALL=C
fail=0
checked=0
for snap in fixtures/devmap/*/devmap.snap; do
  [ -e "$snap" ] || continue
  dir=$(dirname "$snap")
  args=("$dir")
  [ -f "$dir/devmap.args" ] && read -r -a args <"$dir/devmap.args"
  actual=$({ "$devlint" devmap --isolated "${args[@]}" 2>&1; echo "[exit $?]"; })
  checked=$((checked + 1))
  if [ "${3:-}" = --update ]; then
    printf '%s\n' "$actual" >"$snap"
  elif ! diff -u "$snap" <(printf '%s\n' "$actual"); then
    echo "FAIL: $snap differs (tests/devmap_snapshots.sh DEVLINT . --update rewrites it)"
    fail=1
  fi
done
[ "$checked" -gt 0 ] || { echo "FAIL: no devmap.snap found"; exit 1; }
[ "$fail" = 0 ] && echo "ok: $checked devmap snapshots"
exit "$fail"
