#!/usr/bin/env bash
# Snapshot tests (as Ruff's insta or clang-tidy's CHECK-MESSAGES): everything a user reads about a
# fixture package, recorded in `check.snap` beside it and compared byte for byte. A snapshot holds
# two runs from the repository root, each with its exit code and stderr:
#   devlint check            the `full` output: message, origins, why, placement, help, summary
#   devlint check --diff --unsafe-fixes   what every fix, safe or not, does to the code
# A Python package is a directory of fixtures/ holding .py files (its own files, not those of
# the directories below it), as in tests/fixture_test.cpp; the C++ fixtures (fixtures/cpp, one
# translation unit each) are one run, slower, and have a test of their own.
# Runs are made deterministic: relative paths, no colour, no result cache, and no Python
# environment (DEVLINT_PYTHON=false: an installed transformers would otherwise supply bases).
#
# usage: snapshots.sh DEVLINT SOURCE_DIR python|cpp|readme [--update]
#   --update (or DEVLINT_UPDATE_SNAPSHOTS=1) rewrites the snapshots instead of comparing them;
#   tools/update_snapshots.sh does it for every kind and shows what changed.
# `readme` checks that README.md's example output ("## What it reports") is the first finding of
# fixtures/seeds/chatglm3_128k/check.snap; --update rewrites the README block from it.
set -u
devlint=$(realpath "${1:?usage: snapshots.sh DEVLINT SOURCE_DIR python|cpp|readme [--update]}")
cd "${2:?missing SOURCE_DIR}" || exit 2
kind=${3:?missing python, cpp or readme}
update=${DEVLINT_UPDATE_SNAPSHOTS:-0}
[ "${4:-}" = --update ] && update=1
export DEVLINT_PYTHON=false NO_COLOR=1 LC_ALL=C

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
checked=0
changed=0

# One run, as the snapshot records it: the command, its stdout, its stderr if any, its exit code.
record_run() { # record_run OUT ARGS... (the files last)
  local out=$1
  shift
  echo "\$ devlint check $*" >>"$out"
  "$devlint" check --no-cache --color never "$@" >"$tmp/stdout" 2>"$tmp/stderr.all"
  local code=$?
  # Whether this run had to build the precompiled LibTorch header first (a fresh build directory,
  # a new key) is not what a user reads of the fixtures.
  grep -v -e '^devlint: building the precompiled LibTorch header' \
    -e '^devlint: precompiled LibTorch header ready after' "$tmp/stderr.all" >"$tmp/stderr"
  cat "$tmp/stdout" >>"$out"
  if [ -s "$tmp/stderr" ]; then
    echo "[stderr]" >>"$out"
    cat "$tmp/stderr" >>"$out"
  fi
  echo "[exit $code]" >>"$out"
}

# The snapshot of the files given, compared with (or written to) SNAPSHOT.
check_snapshot() { # check_snapshot SNAPSHOT FILES...
  local snapshot=$1
  shift
  local actual="$tmp/actual.snap"
  : >"$actual"
  record_run "$actual" --report-unused-suppressions "$@"
  echo >>"$actual"
  record_run "$actual" --diff --unsafe-fixes --report-unused-suppressions "$@"
  checked=$((checked + 1))
  if [ -f "$snapshot" ] && cmp -s "$actual" "$snapshot"; then
    return
  fi
  if [ "$update" = 1 ]; then
    [ -f "$snapshot" ] && echo "updated: $snapshot" || echo "new: $snapshot"
    cp "$actual" "$snapshot"
    changed=$((changed + 1))
  elif [ -f "$snapshot" ]; then
    echo "FAIL: $snapshot differs from the output (- snapshot, + now):"
    diff -u --label "$snapshot" --label "devlint now" "$snapshot" "$actual"
    fail=1
  else
    echo "FAIL: $snapshot is missing; the output now is:"
    cat "$actual"
    fail=1
  fi
}

# Each directory's own model files, sorted (expected --fix outputs, X.py.fixed, are not .py).
own_files() { # own_files DIR EXTENSION
  find "$1" -maxdepth 1 -type f -name "*.$2" | sort
}

readme_example() { # the first finding of the seed's snapshot: its lines up to the first blank
  awk 'NR > 1 { if ($0 == "") exit; print }' fixtures/seeds/chatglm3_128k/check.snap
}

case "$kind" in
python)
  while IFS= read -r dir; do
    mapfile -t files < <(own_files "$dir" py)
    check_snapshot "$dir/check.snap" "${files[@]}"
  done < <(find fixtures -type f -name '*.py' -printf '%h\n' | sort -u)
  # A snapshot whose package is gone is stale.
  while IFS= read -r snapshot; do
    dir=$(dirname "$snapshot")
    [ "$dir" = fixtures/cpp ] && continue
    if [ -z "$(own_files "$dir" py)" ]; then
      echo "FAIL: $snapshot has no package beside it: remove it"
      fail=1
    fi
  done < <(find fixtures -name check.snap | sort)
  ;;
cpp)
  mapfile -t files < <(own_files fixtures/cpp cpp)
  check_snapshot fixtures/cpp/check.snap "${files[@]}"
  ;;
readme)
  # The block between the two markers in README.md, fenced as text.
  begin='<!-- example output: generated from fixtures/seeds/chatglm3_128k/check.snap by tools/update_snapshots.sh -->'
  end='<!-- end of example output -->'
  if ! grep -qxF "$begin" README.md || ! grep -qxF "$end" README.md; then
    echo "FAIL: README.md lacks the example output markers"
    exit 1
  fi
  { echo '```text'; readme_example; echo '```'; } >"$tmp/block"
  awk -v b="$begin" -v e="$end" '$0 == e { inside = 0 } inside { print } $0 == b { inside = 1 }' \
    README.md >"$tmp/readme_block"
  checked=1
  if ! cmp -s "$tmp/block" "$tmp/readme_block"; then
    if [ "$update" = 1 ]; then
      awk -v b="$begin" -v e="$end" -v block="$tmp/block" '
        $0 == e { inside = 0 }
        !inside { print }
        $0 == b { inside = 1; while ((getline line < block) > 0) print line }' \
        README.md >"$tmp/README.md" && cat "$tmp/README.md" >README.md
      echo "updated: README.md example output"
      changed=1
    else
      echo "FAIL: README.md's example output differs from the snapshot (- README, + snapshot):"
      diff -u --label README.md --label fixtures/seeds/chatglm3_128k/check.snap \
        "$tmp/readme_block" "$tmp/block"
      fail=1
    fi
  fi
  ;;
*)
  echo "unknown kind: $kind (python, cpp or readme)"
  exit 2
  ;;
esac

if [ "$fail" = 0 ]; then
  if [ "$update" = 1 ]; then
    echo "ok: $checked $kind snapshots, $changed written"
  else
    echo "ok: $checked $kind snapshots match"
  fi
else
  echo "To review and accept the output now: tools/update_snapshots.sh, then git diff."
fi
exit "$fail"
