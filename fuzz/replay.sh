#!/usr/bin/env bash
# Runs a fuzz target once on every file under the given directories (crash regressions, seeds).
# Works with the libFuzzer binaries (which run, not fuzz, when given files) and the replay builds.
set -euo pipefail
# Clang crashes recovered from leave their objects behind on purpose (lsan.supp).
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(cd "$(dirname "$0")" && pwd)/lsan.supp"
binary=$1
shift
mapfile -d '' files < <(find "$@" -type f ! -name '.*' ! -name README.md -print0 2>/dev/null | sort -z)
if [ "${#files[@]}" -eq 0 ]; then
  echo "no inputs under $*" >&2
  exit 1
fi
# In batches: a command line has a length limit.
for ((i = 0; i < ${#files[@]}; i += 200)); do
  "$binary" "${files[@]:i:200}" >/dev/null 2>"${TMPDIR:-/tmp}/devlint-replay.$$" || {
    cat "${TMPDIR:-/tmp}/devlint-replay.$$" >&2
    rm -f "${TMPDIR:-/tmp}/devlint-replay.$$"
    exit 1
  }
done
rm -f "${TMPDIR:-/tmp}/devlint-replay.$$"
echo "replayed ${#files[@]} inputs"
